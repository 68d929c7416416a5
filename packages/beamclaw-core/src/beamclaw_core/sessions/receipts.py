"""Receipts of runs handed to an idle worker without being stored first.

A message for an idle lane skips the stored queue (one transaction instead of two): its
turn's first commit stores it. Its sender still gets the promise of ``submit`` — "the
message is durable when this returns" — by waiting on a receipt that the worker settles.

Invariants: a handed-over run has exactly one receipt, settled exactly once:

* accepted at its turn's first commit, or when it is dropped unstored (cap, ``/stop``:
  its handle tells the drop);
* failed with the error that stopped its turn before that commit, or with
  :class:`~beamclaw_core.sessions.errors.TurnNotStartedError` when the worker was stopped
  (the sender's own task was not cancelled) or the machine refused the message.

An acceptance reaches the sender on the event loop's next round, after whatever the
worker starts meanwhile: the turn's LLM request is out before the sender's own work
(an HTTP handler's) resumes, and the two overlap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from beamclaw_core.sessions.errors import TurnNotStartedError
from beamclaw_core.sessions.runs import PendingRun


def _resolve(waiting: asyncio.Future[None]) -> None:
    if not waiting.done():  # its sender may have been cancelled meanwhile
        waiting.set_result(None)


class Receipts:
    """The senders of one lane waiting for their handed-over runs to become durable."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._waiting: dict[str, asyncio.Future[None]] = {}

    def issue(self, run_id: str) -> asyncio.Future[None]:
        """The receipt the sender of ``run_id`` awaits."""
        waiting = self._waiting[run_id] = asyncio.get_running_loop().create_future()
        return waiting

    def outstanding(self, runs: Iterable[PendingRun]) -> bool:
        """Some of ``runs`` still wait for their receipt."""
        return any(r.id in self._waiting for r in runs)

    def accept(self, runs: Iterable[PendingRun]) -> None:
        """``runs`` are durable (or dropped, which their handles tell)."""
        for waiting in self._pop(runs):
            waiting.get_loop().call_soon(_resolve, waiting)

    def fail(self, runs: Iterable[PendingRun], error: BaseException) -> None:
        """``runs`` never became durable; their senders get ``error`` (a cancellation of
        the worker is :class:`TurnNotStartedError` to them)."""
        if isinstance(error, asyncio.CancelledError):
            error = TurnNotStartedError(self._session_id)
        for waiting in self._pop(runs):
            waiting.set_exception(error)

    def _pop(self, runs: Iterable[PendingRun]) -> list[asyncio.Future[None]]:
        found = (self._waiting.pop(r.id, None) for r in runs)
        return [w for w in found if w is not None and not w.done()]
