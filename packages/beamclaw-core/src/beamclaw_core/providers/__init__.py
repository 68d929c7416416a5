"""LLM providers: protocol, OpenAI-compatible and Anthropic implementations, failover."""

from beamclaw_core.providers.assembler import StreamAssembler, collect
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
from beamclaw_core.providers.context_windows import (
    DEFAULT_CONTEXT_WINDOW,
    context_window_for,
    max_output_for,
)
from beamclaw_core.providers.pricing import BUILTIN_PRICES, ModelPrice, PriceTable
from beamclaw_core.providers.settings import ProviderSettings
from beamclaw_core.providers.tokens import (
    estimate_message_tokens,
    estimate_prompt_tokens,
    estimate_tokens,
    estimate_usage,
)

__all__ = [
    "BUILTIN_PRICES",
    "DEFAULT_CONTEXT_WINDOW",
    "Capabilities",
    "Completion",
    "CompletionOptions",
    "ErrorKind",
    "FinishChunk",
    "ModelPrice",
    "PriceTable",
    "Provider",
    "ProviderError",
    "ProviderSettings",
    "ReasoningDelta",
    "StreamAssembler",
    "StreamChunk",
    "TextDelta",
    "ToolCallDelta",
    "UsageChunk",
    "collect",
    "context_window_for",
    "estimate_message_tokens",
    "estimate_prompt_tokens",
    "estimate_tokens",
    "estimate_usage",
    "max_output_for",
]
