"""One LLM call as the executor runs it: progressive text, then one scrubbed event.

Streamed (:func:`stream_llm`) while someone wants drafts, else one non-streaming request
(:func:`complete_llm`); both end in the same final event. Streamed text is forwarded as
it arrives: a :class:`~beamclaw_obs.StreamScrubber` holds back only a tail that could
still grow into a secret, and drafts are coalesced by time alone (at most one per
``coalesce_seconds``), never by size. The drafts join to the scrubbed visible text (all
of it but a last ``<…`` that could have opened a thinking tag: the final event has it).
The final message is scrubbed, its tool calls recovered by the fallback parser when the
provider sent none natively, and its cost priced when the provider reported none.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

from beamclaw_core.loop.inputs import Input, LlmChunk, LlmError, LlmResponse
from beamclaw_core.loop.request import LlmRequest
from beamclaw_core.messages import Message
from beamclaw_core.parsing import has_thinking_tags, parse_tool_calls, strip_thinking
from beamclaw_core.providers import (
    Completion,
    ErrorKind,
    PriceTable,
    Provider,
    ProviderError,
    StreamAssembler,
    TextDelta,
    estimate_usage,
)
from beamclaw_obs import StreamScrubber, scrub, scrub_value

_PRICES = PriceTable.default()


class _Drafts:
    """Scrubs streamed text as it arrives and posts it, coalescing only by time.

    Text the scrubber releases is posted at once unless a draft went out less than
    ``window`` seconds ago; then it waits (with whatever else arrives) until that window
    closes, on a loop timer, never for more text. ``window`` 0 posts every release.
    """

    def __init__(self, window: float, post: Callable[[Input], None]) -> None:
        self._window = window
        self._post = post
        self._scrubber = StreamScrubber()
        self._buf = ""
        self._last = -math.inf
        self._timer: asyncio.TimerHandle | None = None

    def add(self, text: str) -> None:
        self._buf += self._scrubber.feed(text)
        if not self._buf or self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self._last + self._window - loop.time()
        if wait <= 0:
            self._send()
        else:
            self._timer = loop.call_later(wait, self._send)

    def _send(self) -> None:
        self._timer = None
        if self._buf:
            self._post(LlmChunk(self._buf))
            self._buf = ""
            self._last = asyncio.get_running_loop().time()

    def flush(self) -> None:
        """Post everything still held (the stream ended)."""
        if self._timer is not None:
            self._timer.cancel()
        self._buf += self._scrubber.finish()
        self._send()

    def close(self) -> None:
        """Cancel the pending timer: the stream is over (:meth:`flush` then posts what is
        left) or failed (its held text never becomes a draft)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def scrub_message(message: Message) -> Message:
    """The assistant message with secrets removed from text, reasoning and tool arguments."""
    calls = tuple(
        c.model_copy(
            update={
                "args": scrub_value(c.args),
                "raw_args": None if c.raw_args is None else scrub(c.raw_args),
            }
        )
        for c in message.tool_calls
    )
    return message.model_copy(
        update={
            "content": scrub(message.text),
            "reasoning": None if message.reasoning is None else scrub(message.reasoning),
            "tool_calls": calls,
        }
    )


async def stream_llm(
    provider: Provider,
    request: LlmRequest,
    *,
    coalesce_seconds: float,
    post: Callable[[Input], None],
) -> Input:
    """Stream ``request`` (as :class:`~beamclaw_core.loop.request.TurnRequestBuilder`
    built it), posting :class:`LlmChunk` drafts (scrubbed, at most one per
    ``coalesce_seconds``); return the final event."""
    drafts = _Drafts(coalesce_seconds, post)
    assembler = StreamAssembler(provider=provider.name)
    visible = VisibleText()
    try:
        async for chunk in provider.stream(request.messages, request.options):
            assembler.feed(chunk)
            if isinstance(chunk, TextDelta):
                delta = visible.add(chunk.text)
                if delta:
                    drafts.add(delta)
        completion = assembler.completion(model=request.options.model or provider.model)
    except ProviderError as e:
        return LlmError(e.kind, scrub(e.message), e.retry_after)
    finally:
        drafts.close()
    drafts.flush()
    return _final(provider, completion, request)


async def complete_llm(provider: Provider, request: LlmRequest) -> Input:
    """One non-streaming call of ``request`` (nobody wants drafts); the same final event
    as :func:`stream_llm` would give."""
    try:
        completion = await provider.complete(request.messages, request.options)
    except ProviderError as e:
        return LlmError(e.kind, scrub(e.message), e.retry_after)
    return _final(provider, completion, request)


def _final(provider: Provider, completion: Completion, request: LlmRequest) -> Input:
    """The call's final event: tool calls recovered from text when none came natively,
    usage estimated and priced when missing, everything scrubbed."""
    messages, tools, model = request.messages, request.tools, request.options.model
    message = completion.message
    used_model = completion.model or model or provider.model
    if not message.tool_calls and tools:
        parsed = parse_tool_calls(message.text)
        if parsed.calls:
            message = message.model_copy(
                update={"tool_calls": parsed.calls, "content": parsed.text}
            )
    usage = message.usage or estimate_usage(messages, message, tools)
    if usage.cost_usd is None:
        usage = _PRICES.apply(used_model, usage)
    message = scrub_message(message.model_copy(update={"usage": usage, "model": used_model}))
    return LlmResponse(message, usage, used_model)


_TAG_REACH = 64
"""How far back a thinking tag that a new delta completes may have started."""


class VisibleText:
    """Tracks the thinking-stripped text so only what the user may see is streamed.

    Linear in the length of the answer: until a thinking tag shows up, only each new
    delta (plus the tail a tag could have started in) is searched for one, and the
    visible text is the raw text; from the first tag on, the whole text is stripped
    again per delta (it can change what came before).
    """

    HOLD = 16
    """A ``<`` this close to the end may open a thinking tag: wait for more text."""

    def __init__(self) -> None:
        self._raw = ""
        self._sent = 0
        self._tagged = False

    def add(self, text: str) -> str:
        """The newly visible text once ``text`` is appended ("" while nothing new is)."""
        start = len(self._raw)
        self._raw += text
        if not self._tagged:
            self._tagged = has_thinking_tags(self._raw[max(0, start - _TAG_REACH) :])
        visible = strip_thinking(self._raw, fallback=False).text if self._tagged else self._raw
        lt = visible.rfind("<", max(0, len(visible) - self.HOLD + 1))
        if lt >= 0:
            visible = visible[:lt]  # a thinking tag may be opening: wait for more text
        if len(visible) <= self._sent:
            return ""
        out = visible[self._sent :]
        self._sent = len(visible)
        return out


def provider_failure(exc: Exception) -> LlmError:
    """An unexpected exception from a provider, as a retryable LLM error."""
    return LlmError(ErrorKind.UNKNOWN, scrub(f"{type(exc).__name__}: {exc}"))
