"""Script steps for the fake LLM servers: replies and injected faults.

A fake server consumes one step per request (a callable step sees the
:class:`RecordedRequest` and returns the step to play). Steps:

* :class:`FakeReply` — a normal answer (text, tool calls, reasoning, usage), streamed when
  the request asks for it, in ``chunk_size`` pieces or as the given ``tokens`` (one event
  each, as real providers stream); ``delay`` is the gap between events; ``gate`` is
  awaited before each event after the first (a test paces the stream by what its client
  has seen); ``hold`` makes the server wait for an :class:`asyncio.Event` before sending
  the last two frames (tests prove chunks reach the client before the stream ends).
* :class:`HttpFault` — an error status with a body and headers (``rate_limit``,
  ``server_error``, ``auth_error``, ``bad_request``, ``context_overflow`` helpers).
* :class:`Truncate` — stream ``after_events`` events of a reply, then drop the connection.
* :class:`InvalidJSON` — a 200 whose body (or first stream event) is not JSON.
* :class:`RawBody` — any status, content type and bytes (HTML pages, huge bodies).
* :class:`StreamError` — an in-band error event in the middle of a stream.
* :class:`Hang` — accept the request and never answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from beamclaw_core.messages import Usage


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake server received, exactly."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    raw: bytes
    body: Any
    """The decoded JSON body (``None`` when it was not JSON)."""


@dataclass(frozen=True)
class FakeToolCall:
    """A tool call in a scripted reply; ``raw_args`` is sent verbatim when set."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw_args: str | None = None


@dataclass(frozen=True)
class FakeReply:
    """A successful answer."""

    text: str = ""
    tool_calls: tuple[FakeToolCall, ...] = ()
    reasoning: str | None = None
    usage: Usage | None = field(
        default_factory=lambda: Usage(prompt_tokens=11, completion_tokens=7, total_tokens=18)
    )
    """``None`` sends no usage at all (clients must estimate)."""
    finish_reason: str | None = None
    """Wire-native value; derived from the content when None."""
    model: str | None = None
    chunk_size: int = 4
    delay: float = 0.0
    hold: asyncio.Event | None = None
    tokens: tuple[str, ...] = ()
    """Stream the text as exactly these deltas (``text`` defaults to their join)."""
    gate: Callable[[int], Awaitable[None]] | None = None
    """Awaited before stream event ``i`` (``i >= 1``; event 0 is the first, with tokens
    event ``i`` is token ``i - 1``)."""

    def __post_init__(self) -> None:
        if self.tokens and not self.text:
            object.__setattr__(self, "text", "".join(self.tokens))

    def text_pieces(self) -> list[str]:
        """The content deltas of a stream: the tokens, else ``chunk_size`` slices."""
        if self.tokens:
            return list(self.tokens)
        size = max(1, self.chunk_size)
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]


@dataclass(frozen=True)
class HttpFault:
    """An HTTP error response."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def rate_limit(cls, retry_after: float = 3, message: str = "rate limit exceeded") -> HttpFault:
        return cls(
            429,
            {"error": {"type": "rate_limit_error", "message": message}},
            {"Retry-After": f"{retry_after:g}"},
        )

    @classmethod
    def server_error(cls, status: int = 500, message: str = "internal error") -> HttpFault:
        return cls(status, {"error": {"type": "api_error", "message": message}})

    @classmethod
    def auth_error(cls, status: int = 401, message: str = "invalid api key") -> HttpFault:
        return cls(status, {"error": {"type": "authentication_error", "message": message}})

    @classmethod
    def bad_request(cls, message: str = "messages: invalid", status: int = 400) -> HttpFault:
        return cls(status, {"error": {"type": "invalid_request_error", "message": message}})

    @classmethod
    def context_overflow(cls) -> HttpFault:
        return cls(
            400,
            {
                "error": {
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                    "message": "This model's maximum context length is 8192 tokens. However, your "
                    "messages resulted in 9001 tokens.",
                }
            },
        )


@dataclass(frozen=True)
class Truncate:
    """Send the first ``after_events`` stream events of ``reply``, then cut the connection."""

    reply: FakeReply = field(default_factory=lambda: FakeReply(text="this answer never ends"))
    after_events: int = 2


@dataclass(frozen=True)
class InvalidJSON:
    """A 200 whose JSON body (or stream event) is malformed."""

    body: str = '{"choices": [ this is not json'


@dataclass(frozen=True)
class RawBody:
    """Any response: status, content type, body bytes and extra headers (say
    ``Content-Encoding`` for a body compressed by the test)."""

    body: bytes
    status: int = 200
    content_type: str = "text/html"
    headers: dict[str, str] = field(default_factory=dict[str, str])


@dataclass(frozen=True)
class StreamError:
    """Stream ``after_events`` events of ``reply`` then an in-band error object."""

    error: dict[str, Any]
    reply: FakeReply = field(default_factory=lambda: FakeReply(text="partial"))
    after_events: int = 1


@dataclass(frozen=True)
class Hang:
    """Never answer (until the server stops)."""


FakeStep = FakeReply | HttpFault | Truncate | InvalidJSON | RawBody | StreamError | Hang
FakeStepFn = Callable[[RecordedRequest], FakeStep]
