"""LLM providers: protocol, OpenAI-compatible and Anthropic implementations, failover.

Build from configuration with :func:`build_provider` / :func:`build_provider_chain`;
consume with ``stream()`` + :class:`StreamAssembler` (or ``complete()``); failures are
:class:`ProviderError` with an :class:`ErrorKind`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.providers.anthropic import AnthropicProvider
    from beamclaw_core.providers.assembler import StreamAssembler, collect
    from beamclaw_core.providers.base import (
        Capabilities,
        Completion,
        CompletionOptions,
        ErrorKind,
        FinishChunk,
        Provider,
        ProviderConfigError,
        ProviderError,
        ReasoningDelta,
        StreamChunk,
        TextDelta,
        ToolCallDelta,
        UpstreamError,
        UsageChunk,
    )
    from beamclaw_core.providers.classify import is_context_overflow, parse_retry_after
    from beamclaw_core.providers.context_windows import (
        DEFAULT_CONTEXT_WINDOW,
        MODEL_FAMILIES,
        context_window_for,
        max_output_for,
    )
    from beamclaw_core.providers.failover import (
        DEFAULT_FAILOVER_KINDS,
        FailoverMember,
        FailoverProvider,
        MemberHealth,
    )
    from beamclaw_core.providers.http_client import Upstream, UpstreamResponse, build_upstream
    from beamclaw_core.providers.http_provider import HttpProvider, completion_chunks
    from beamclaw_core.providers.openai import OpenAIProvider
    from beamclaw_core.providers.pricing import BUILTIN_PRICES, ModelPrice, PriceTable
    from beamclaw_core.providers.registry import (
        ProviderFactory,
        build_provider,
        build_provider_chain,
        provider_kinds,
        register_provider_kind,
    )
    from beamclaw_core.providers.settings import FallbackRef, ProviderSettings
    from beamclaw_core.providers.sse import ServerSentEvent, SSEDecoder
    from beamclaw_core.providers.tokens import (
        estimate_message_tokens,
        estimate_prompt_tokens,
        estimate_tokens,
        estimate_usage,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.providers.anthropic": ("AnthropicProvider",),
            "beamclaw_core.providers.assembler": ("StreamAssembler", "collect"),
            "beamclaw_core.providers.base": (
                "Capabilities",
                "Completion",
                "CompletionOptions",
                "ErrorKind",
                "FinishChunk",
                "Provider",
                "ProviderConfigError",
                "ProviderError",
                "ReasoningDelta",
                "StreamChunk",
                "TextDelta",
                "ToolCallDelta",
                "UpstreamError",
                "UsageChunk",
            ),
            "beamclaw_core.providers.classify": ("is_context_overflow", "parse_retry_after"),
            "beamclaw_core.providers.context_windows": (
                "DEFAULT_CONTEXT_WINDOW",
                "MODEL_FAMILIES",
                "context_window_for",
                "max_output_for",
            ),
            "beamclaw_core.providers.failover": (
                "DEFAULT_FAILOVER_KINDS",
                "FailoverMember",
                "FailoverProvider",
                "MemberHealth",
            ),
            "beamclaw_core.providers.http_client": (
                "Upstream",
                "UpstreamResponse",
                "build_upstream",
            ),
            "beamclaw_core.providers.http_provider": ("HttpProvider", "completion_chunks"),
            "beamclaw_core.providers.openai": ("OpenAIProvider",),
            "beamclaw_core.providers.pricing": ("BUILTIN_PRICES", "ModelPrice", "PriceTable"),
            "beamclaw_core.providers.registry": (
                "ProviderFactory",
                "build_provider",
                "build_provider_chain",
                "provider_kinds",
                "register_provider_kind",
            ),
            "beamclaw_core.providers.settings": ("FallbackRef", "ProviderSettings"),
            "beamclaw_core.providers.sse": ("ServerSentEvent", "SSEDecoder"),
            "beamclaw_core.providers.tokens": (
                "estimate_message_tokens",
                "estimate_prompt_tokens",
                "estimate_tokens",
                "estimate_usage",
            ),
        },
    )

__all__ = [
    "BUILTIN_PRICES",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_FAILOVER_KINDS",
    "MODEL_FAMILIES",
    "AnthropicProvider",
    "Capabilities",
    "Completion",
    "CompletionOptions",
    "ErrorKind",
    "FailoverMember",
    "FailoverProvider",
    "FallbackRef",
    "FinishChunk",
    "HttpProvider",
    "MemberHealth",
    "ModelPrice",
    "OpenAIProvider",
    "PriceTable",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "ProviderFactory",
    "ProviderSettings",
    "ReasoningDelta",
    "SSEDecoder",
    "ServerSentEvent",
    "StreamAssembler",
    "StreamChunk",
    "TextDelta",
    "ToolCallDelta",
    "Upstream",
    "UpstreamError",
    "UpstreamResponse",
    "UsageChunk",
    "build_provider",
    "build_provider_chain",
    "build_upstream",
    "collect",
    "completion_chunks",
    "context_window_for",
    "estimate_message_tokens",
    "estimate_prompt_tokens",
    "estimate_tokens",
    "estimate_usage",
    "is_context_overflow",
    "max_output_for",
    "parse_retry_after",
    "provider_kinds",
    "register_provider_kind",
]
