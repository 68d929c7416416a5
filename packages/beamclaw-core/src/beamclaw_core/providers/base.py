"""The provider protocol (seed 001 ``bc_provider`` in Python terms) and its value types.

A provider maps :class:`~beamclaw_core.messages.Message` lists to one LLM API and back.
``stream`` yields typed chunks as they arrive; ``complete`` returns one assistant message.
Failures are raised as :class:`ProviderError` carrying an :class:`ErrorKind` (Bedrock's
ErrorKind): classification only — whether to retry is the loop machine's decision.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from beamclaw_core.errors import BeamclawCoreError
from beamclaw_core.kinds import (
    ErrorKind as ErrorKind,  # re-exported: providers speak in these kinds
)
from beamclaw_core.messages import Message, Usage
from beamclaw_tools import ToolDef


class ProviderError(BeamclawCoreError):
    """An LLM call failed. ``message`` is safe to show (never contains a key).

    Attributes:
        kind: the classification the loop machine decides retries on.
        message: a human-actionable, scrubbed description.
        provider: the configured provider name (``[core.providers.<name>]``).
        status: the HTTP status when there was one.
        retry_after: seconds the server asked us to wait (429 ``Retry-After``).
        model: the model that was asked.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        provider: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        model: str | None = None,
    ) -> None:
        self.kind = kind
        self.message = message
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        self.model = model
        prefix = f"{provider}: " if provider else ""
        super().__init__(f"{prefix}{kind.value}: {message}")


class UpstreamError(ProviderError):
    """The transport failed (refused, timed out, cut mid-response): raised by the
    :class:`~beamclaw_core.providers.http_client.Upstream` seam on either transport, kind
    ``NETWORK``; the provider re-raises it as a ``ProviderError`` naming itself and the model.
    """

    def __init__(self, message: str) -> None:
        super().__init__(ErrorKind.NETWORK, message)


class ProviderConfigError(ProviderError):
    """A provider's configuration cannot work (missing model, bad base URL, unknown kind).

    Always ``kind=INVALID_REQUEST`` (never retried); ``key`` names the offending setting.
    """

    def __init__(self, provider: str, key: str, message: str) -> None:
        self.key = key
        super().__init__(
            ErrorKind.INVALID_REQUEST,
            f"[core.providers.{provider}] {key}: {message}",
            provider=provider,
        )


class _Chunk(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextDelta(_Chunk):
    type: Literal["text"] = "text"
    text: str


class ReasoningDelta(_Chunk):
    """Model thinking; never shown as the answer.

    ``signature`` carries Anthropic's thinking-block signature (sent with the final
    fragment of a block) so the block can be replayed on the next request.
    """

    type: Literal["reasoning"] = "reasoning"
    text: str
    signature: str | None = None


class ToolCallDelta(_Chunk):
    """A fragment of tool call number ``index``; ``arguments`` fragments concatenate."""

    type: Literal["tool_call"] = "tool_call"
    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


class UsageChunk(_Chunk):
    type: Literal["usage"] = "usage"
    usage: Usage


class FinishChunk(_Chunk):
    """The stream ended normally. ``reason``: stop, tool_calls, length, content_filter…"""

    type: Literal["finish"] = "finish"
    reason: str
    model: str | None = None


StreamChunk = Annotated[
    TextDelta | ReasoningDelta | ToolCallDelta | UsageChunk | FinishChunk,
    Field(discriminator="type"),
]


class Capabilities(_Chunk):
    """What a provider/model supports."""

    context_window: int = 128_000
    max_output_tokens: int | None = None
    supports_tools: bool = True
    supports_vision: bool = False
    supports_streaming_usage: bool = True
    supports_reasoning: bool = False
    supports_prompt_caching: bool = False


class CompletionOptions(_Chunk):
    """Per-call options. ``model`` overrides the provider's configured model."""

    model: str | None = None
    tools: tuple[ToolDef, ...] = ()
    tool_choice: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    extra: dict[str, Any] = Field(default_factory=dict)
    """Merged last into the request body (provider-specific knobs)."""
    reasoning_effort: str | None = None
    """OpenAI-style ``reasoning_effort`` (``low``/``medium``/``high``) when supported."""
    thinking_budget_tokens: int | None = None
    """Anthropic extended thinking budget; ``None`` uses the provider setting."""
    session_id: str | None = None
    """Only used to label ``llm_request``/``llm_response`` events."""


class Completion(_Chunk):
    """A finished LLM response: one assistant message (``tool_calls`` and ``usage`` set)."""

    message: Message
    finish_reason: str = "stop"
    model: str | None = None
    provider: str | None = None
    """The configured provider name that answered (set by failover too)."""

    @property
    def usage(self) -> Usage | None:
        return self.message.usage


@runtime_checkable
class Provider(Protocol):
    """An LLM endpoint. Implementations own one long-lived HTTP client."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    async def complete(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> Completion:
        """One whole response. Raises :class:`ProviderError`."""
        ...

    def stream(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> AsyncIterator[StreamChunk]:
        """Chunks as they arrive, ending with a :class:`FinishChunk`.

        Raises :class:`ProviderError` (also mid-stream, e.g. a truncated stream).
        """
        ...

    def capabilities(self) -> Capabilities: ...

    async def close(self) -> None: ...
