"""A scripted in-process :class:`~beamclaw_core.providers.base.Provider` for tests.

Each call to ``complete``/``stream`` consumes the next rule of the script:

* :class:`Reply` — answer with text (optionally reasoning, explicit usage, finish reason);
* :class:`CallTool` — ask for one tool call; :class:`CallTools` — several at once;
* :class:`Fail` — raise ``ProviderError(kind)``; with ``after_chunks`` the stream yields
  that many chunks first and then fails (a truncated stream);
* :class:`Hang` — never answer (until cancelled): for cancellation and timeout tests;
* a callable ``(messages, options) -> rule`` — decides from what it was sent.

Every call is recorded in :attr:`ScriptedProvider.calls` with the exact messages and
options. When the script runs out, ``ProviderError(INVALID_REQUEST)`` names the call number
(``repeat_last=True`` keeps answering with the last rule instead). Streaming splits text
into ``chunk_size``-character deltas and each tool call's arguments into two fragments, so
consumers exercise the same assembly path as with real providers. Usage is estimated when a
rule gives none. No I/O, no clock, no randomness: ids are deterministic.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from beamclaw_core.messages import Message, Usage
from beamclaw_core.parsing import canonical_args, make_id_factory
from beamclaw_core.providers.assembler import StreamAssembler
from beamclaw_core.providers.base import (
    Capabilities,
    Completion,
    CompletionOptions,
    ErrorKind,
    FinishChunk,
    ProviderError,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from beamclaw_core.providers.tokens import estimate_usage
from beamclaw_tools import ToolCall


@dataclass(frozen=True)
class Reply:
    """Answer with ``text``."""

    text: str
    reasoning: str | None = None
    usage: Usage | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class CallTool:
    """Ask for one tool call (``id`` generated deterministically when None)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    text: str = ""
    raw_args: str | None = None
    """Send these argument bytes verbatim instead of ``args`` (malformed-JSON tests)."""
    usage: Usage | None = None


@dataclass(frozen=True)
class CallTools:
    """Ask for several tool calls in one response."""

    calls: tuple[CallTool, ...]
    text: str = ""
    usage: Usage | None = None


@dataclass(frozen=True)
class Fail:
    """Fail with ``kind``; ``after_chunks`` > 0 fails mid-stream after that many chunks
    (``complete`` fails at once either way)."""

    kind: ErrorKind
    message: str = "scripted failure"
    retry_after: float | None = None
    status: int | None = None
    after_chunks: int = 0
    text: str = "partial answer that never finished"


@dataclass(frozen=True)
class Hang:
    """Never answer; the call waits until it is cancelled."""


Rule = Reply | CallTool | CallTools | Fail | Hang
RuleFn = Callable[[list[Message], CompletionOptions], Rule]
ScriptStep = Rule | RuleFn


@dataclass(frozen=True)
class ScriptedCall:
    """One recorded call: what the provider was sent."""

    messages: tuple[Message, ...]
    options: CompletionOptions
    stream: bool


async def _forever() -> None:
    await asyncio.Event().wait()


class ScriptedProvider:
    """A :class:`~beamclaw_core.providers.base.Provider` that follows a script.

    Args:
        script: rules consumed one per call, in order.
        name: provider name (``Completion.provider``).
        model: model name reported on every completion.
        chunk_size: characters per text delta when streaming.
        repeat_last: keep using the last rule once the script is exhausted.
        capabilities: what :meth:`capabilities` reports.
    """

    def __init__(
        self,
        script: Sequence[ScriptStep] = (),
        *,
        name: str = "scripted",
        model: str = "scripted-model",
        chunk_size: int = 8,
        repeat_last: bool = False,
        capabilities: Capabilities | None = None,
    ) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self._script = list(script)
        self._name = name
        self._model = model
        self._chunk_size = chunk_size
        self._repeat_last = repeat_last
        self._capabilities = capabilities or Capabilities(supports_vision=True)
        self.calls: list[ScriptedCall] = []
        self.closed = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._model

    def add(self, *steps: ScriptStep) -> None:
        """Append rules to the script."""
        self._script.extend(steps)

    @property
    def remaining(self) -> int:
        """Rules not yet consumed."""
        return max(0, len(self._script) - len(self.calls))

    def capabilities(self) -> Capabilities:
        return self._capabilities

    async def close(self) -> None:
        self.closed = True

    async def complete(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> Completion:
        opts = options or CompletionOptions()
        rule = self._next(messages, opts, stream=False)
        if isinstance(rule, Hang):
            await _forever()
            raise AssertionError("unreachable")
        if isinstance(rule, Fail):
            raise self._error(rule)
        assembler = StreamAssembler(provider=self._name)
        assembler.feed_all(self._chunks(rule, messages, opts))
        return assembler.completion(model=opts.model or self._model)

    async def stream(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> AsyncIterator[StreamChunk]:
        opts = options or CompletionOptions()
        rule = self._next(messages, opts, stream=True)
        if isinstance(rule, Hang):
            await _forever()
            raise AssertionError("unreachable")
        if isinstance(rule, Fail):
            for i, chunk in enumerate(self._text_chunks(rule.text)):
                if i >= rule.after_chunks:
                    break
                await asyncio.sleep(0)
                yield chunk
            raise self._error(rule)
        for chunk in self._chunks(rule, messages, opts):
            await asyncio.sleep(0)
            yield chunk

    # -- internals -------------------------------------------------------------------

    def _next(self, messages: list[Message], opts: CompletionOptions, *, stream: bool) -> Rule:
        index = len(self.calls)
        self.calls.append(ScriptedCall(tuple(messages), opts, stream))
        if index < len(self._script):
            step = self._script[index]
        elif self._repeat_last and self._script:
            step = self._script[-1]
        else:
            raise ProviderError(
                ErrorKind.INVALID_REQUEST,
                f"script exhausted: call #{index + 1} but only {len(self._script)} rule(s)",
                provider=self._name,
                model=self._model,
            )
        if isinstance(step, Reply | CallTool | CallTools | Fail | Hang):
            return step
        return step(list(messages), opts)

    def _error(self, rule: Fail) -> ProviderError:
        return ProviderError(
            rule.kind,
            rule.message,
            provider=self._name,
            status=rule.status,
            retry_after=rule.retry_after,
            model=self._model,
        )

    def _text_chunks(self, text: str) -> list[StreamChunk]:
        size = self._chunk_size
        return [TextDelta(text=text[i : i + size]) for i in range(0, len(text), size)]

    def _chunks(
        self, rule: Reply | CallTool | CallTools, messages: list[Message], opts: CompletionOptions
    ) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        usage: Usage | None
        if isinstance(rule, Reply):
            if rule.reasoning:
                out.append(ReasoningDelta(text=rule.reasoning))
            out += self._text_chunks(rule.text)
            usage = rule.usage
            reply = Message.assistant(rule.text, reasoning=rule.reasoning)
            reason = rule.finish_reason
        else:
            calls = rule.calls if isinstance(rule, CallTools) else (rule,)
            text = rule.text
            out += self._text_chunks(text)
            ids = make_id_factory(f"scripted:{len(self.calls)}")
            made: list[ToolCall] = []
            for index, call in enumerate(calls):
                arguments = call.raw_args if call.raw_args is not None else json.dumps(call.args)
                call_id = call.id or ids(index, call.name, canonical_args(call.args))
                half = len(arguments) // 2
                out.append(
                    ToolCallDelta(
                        index=index, id=call_id, name=call.name, arguments=arguments[:half]
                    )
                )
                out.append(ToolCallDelta(index=index, arguments=arguments[half:]))
                made.append(ToolCall(id=call_id, name=call.name, args=call.args))
            usage = rule.usage
            reply = Message.assistant(text, tool_calls=tuple(made))
            reason = "tool_calls"
        out.append(UsageChunk(usage=usage or estimate_usage(messages, reply, opts.tools)))
        out.append(FinishChunk(reason=reason, model=opts.model or self._model))
        return out
