"""Session ends, told to whoever keeps state per session (the sandbox removes its
container there).

A session *context* ends when its view starts afresh (``/new``, ``/reset``, the daily or
idle reset: ``closed`` False) and a session *lane* ends when it leaves memory (idle
eviction), is deleted, or the core stops (``closed`` True). Each is one :class:`SessionEnd`: the ``session_end`` obs event and a
call of every hook registered with :meth:`SessionEnds.add`.

Invariants:

* Firing never blocks and never fails the caller: each hook runs in its own task; an
  exception is logged with the session and the reason, and the other hooks still run.
* :meth:`SessionEnds.drain` (the core's stop) waits, bounded, for the hooks in flight, so
  a shutdown's own ends are handled before the process exits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from loguru import logger

from beamclaw_obs import EventType, cancel_and_wait, emit


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """Session ``session_id`` of ``agent_id`` and ``user_id`` ended for ``reason``."""

    session_id: str
    agent_id: str
    user_id: str
    reason: str
    """``idle`` (evicted from memory), ``deleted`` or ``shutdown`` when the lane closed;
    the reset's own reason (``/new``, ``/reset``, ``reset``, ``automatic reset (…)``)
    when the context started afresh."""
    closed: bool
    """The lane left memory (else only its context started afresh: history stays)."""


SessionEndHook = Callable[[SessionEnd], Awaitable[None]]


class SessionEnds:
    """The registered hooks and the tasks running them."""

    def __init__(self) -> None:
        self._hooks: list[SessionEndHook] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, hook: SessionEndHook) -> Callable[[], None]:
        """Call ``hook`` at every session end from now on; returns its removal."""
        self._hooks.append(hook)

        def remove() -> None:
            if hook in self._hooks:
                self._hooks.remove(hook)

        return remove

    def fire(self, end: SessionEnd) -> None:
        """Emit ``session_end`` and start every hook (see the invariants)."""
        emit(
            EventType.SESSION_END,
            session_id=end.session_id,
            reason=end.reason,
            closed=end.closed,
        )
        for hook in list(self._hooks):
            task = asyncio.get_running_loop().create_task(self._run(hook, end))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _run(hook: SessionEndHook, end: SessionEnd) -> None:
        try:
            await hook(end)
        except Exception:
            logger.exception(
                "session-end hook {} failed for session {} ({})",
                getattr(hook, "__qualname__", hook),
                end.session_id,
                end.reason,
            )

    async def drain(self, grace_seconds: float) -> None:
        """Wait up to ``grace_seconds`` for running hooks, then cancel the rest."""
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(list(self._tasks), timeout=grace_seconds)
        await cancel_and_wait(pending)
