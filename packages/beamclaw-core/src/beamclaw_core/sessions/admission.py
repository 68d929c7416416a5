"""How many turns of the process prepare their first LLM request at once.

A turn's start is the CPU-heavy part of it: the person's message is committed, memory is
searched for its context, the system prompt and the request are built. When many turns
start together (200 people at once), their start-up steps fill the event loop's ready
queue, and a stream already answering waits behind all of them for its next token: a
stall a person sees. :class:`TurnStarts` lets ``limit`` turns prepare at once; the others
wait (in arrival order) for a slot, outside the ready queue. A slot is given back the
moment its turn calls the model (:class:`AdmittedProvider`) or does anything else that
may wait — a tool, an approval, a retry's delay, sub-agents (:func:`releasing`) — and at
the latest when the turn ends: a turn never holds one while it waits on the network or a
person (a turn recovered mid-approval gives its slot back at once).

Invariants: a slot is released exactly once (:meth:`StartSlot.release` is idempotent);
``limit`` 0 admits every turn at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from beamclaw_core.loop import effects as fx
from beamclaw_core.messages import Message
from beamclaw_core.providers import Provider
from beamclaw_core.providers.base import Capabilities, Completion, CompletionOptions, StreamChunk

__all__ = ["AdmittedProvider", "StartSlot", "TurnStarts", "releasing"]

_PREPARING = (fx.PersistMessage, fx.NotifyClient, fx.MeasureContext, fx.RequestLlm)
"""Effects of a turn's start: they keep its slot (a model request frees it as it calls)."""


class StartSlot:
    """One turn's admission: released once, by whichever comes first."""

    def __init__(self, semaphore: asyncio.Semaphore | None) -> None:
        self._semaphore = semaphore

    def release(self) -> None:
        semaphore, self._semaphore = self._semaphore, None
        if semaphore is not None:
            semaphore.release()


class TurnStarts:
    """The process's turn-start slots (``[core.agentic_loop] turn_starts``)."""

    def __init__(self, limit: int) -> None:
        self._semaphore = asyncio.Semaphore(limit) if limit > 0 else None

    async def slot(self) -> StartSlot:
        """Wait for a slot (at once when unbounded)."""
        if self._semaphore is not None:
            await self._semaphore.acquire()
        return StartSlot(self._semaphore)


class AdmittedProvider:
    """``provider``, releasing ``slot`` as each call is made (the first one frees it)."""

    def __init__(self, provider: Provider, slot: StartSlot) -> None:
        self._provider = provider
        self._slot = slot

    @property
    def name(self) -> str:
        return self._provider.name

    @property
    def model(self) -> str:
        return self._provider.model

    async def complete(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> Completion:
        self._slot.release()
        return await self._provider.complete(messages, options)

    def stream(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> AsyncIterator[StreamChunk]:
        self._slot.release()
        return self._provider.stream(messages, options)

    def capabilities(self) -> Capabilities:
        return self._provider.capabilities()

    async def close(self) -> None:
        await self._provider.close()


def releasing(hook: Callable[[fx.Effect], None], slot: StartSlot) -> Callable[[fx.Effect], None]:
    """``hook``, first giving ``slot`` back before any effect that may wait."""

    def before(effect: fx.Effect) -> None:
        if not isinstance(effect, _PREPARING):
            slot.release()
        hook(effect)

    return before
