"""LLM providers: protocol, OpenAI-compatible and Anthropic implementations, failover."""

from beamclaw_core.providers.base import (
    Capabilities,
    Completion,
    CompletionOptions,
    ErrorKind,
    FinishChunk,
    Provider,
    ProviderError,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from beamclaw_core.providers.settings import ProviderSettings

__all__ = [
    "Capabilities",
    "Completion",
    "CompletionOptions",
    "ErrorKind",
    "FinishChunk",
    "Provider",
    "ProviderError",
    "ProviderSettings",
    "ReasoningDelta",
    "StreamChunk",
    "TextDelta",
    "ToolCallDelta",
    "UsageChunk",
]
