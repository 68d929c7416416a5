"""One lane's queue of pending runs: the decisions of
:mod:`~beamclaw_core.sessions.queue_policy`, applied — stored (``pending_runs``, so runs
survive a restart), dropped, their senders told — and waited on by the worker.

Invariants: runs leave only from the front (taken for a turn, dropped as the oldest) or
all at once (cleared, drained), except runs never stored, which leave when the worker
stops for good; every run leaving without a turn is announced ``Dropped`` (but for
:meth:`LaneQueue.drain`, whose caller tells); a sender hears ``Queued(position)`` when its
run arrives behind a turn and again only when its place changed (1 = next).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from beamclaw_core.loop.turn_events import Dropped, Queued, TurnEvent
from beamclaw_core.sessions.queue_policy import (
    Arrival,
    ArrivalDecision,
    Debounce,
    Enqueue,
    QueueState,
    WaitForWork,
    Waiting,
    arrive,
    take,
)
from beamclaw_core.sessions.receipts import Receipts
from beamclaw_core.sessions.runs import PendingRun
from beamclaw_core.sessions.runtime import Runtime
from beamclaw_obs import EventType, emit


class LaneQueue:
    """The runs waiting in one lane, oldest first, and what their senders were told."""

    def __init__(self, rt: Runtime, session_id: str, publish: Callable[[TurnEvent], None]) -> None:
        self._rt = rt
        self._id = session_id
        self._publish = publish
        self._runs: deque[PendingRun] = deque()
        self._told: dict[str, int] = {}
        self._last_arrival = 0.0
        self._changed = asyncio.Event()
        """Set whenever runs arrive or leave (wakes the worker, ends a debounce)."""
        self.receipts = Receipts(session_id)

    def __len__(self) -> int:
        return len(self._runs)

    def _state(self, turn_running: bool) -> QueueState:
        cfg = self._rt.settings.queue
        return QueueState(
            queued=tuple(Waiting(r.id, r.queued_behind, r.scheduled) for r in self._runs),
            turn_running=turn_running,
            mode=cfg.mode,
            cap=cfg.cap,
            debounce=cfg.debounce_ms / 1000,
            last_arrival=self._last_arrival,
        )

    # ------------------------------------------------------------ arrivals

    def decide(self, arrival: Arrival, *, turn_running: bool) -> ArrivalDecision:
        """The policy's decision on ``arrival`` now."""
        return arrive(self._state(turn_running), arrival)

    def hand_over(self, run: PendingRun, now: float) -> asyncio.Future[None]:
        """Give the (unstored) ``run`` to the idle worker; the returned receipt settles
        at its turn's first commit."""
        accepted = self.receipts.issue(run.id)
        self._append(run, now)
        return accepted

    async def enqueue(self, run: PendingRun, decision: Enqueue, now: float) -> None:
        """Store ``run`` behind a turn, dropping ``decision.dropped`` first."""
        if decision.dropped:
            dropped = self._take(decision.dropped)
            cap = self._rt.settings.queue.cap
            await self._drop(
                dropped, f"The queue is full ({cap} messages): this older message was dropped."
            )
            for old in dropped:
                emit(EventType.QUEUE_DROPPED, session_id=self._id, run_id=old.id)
            self._announce_positions()
        await self._rt.store.enqueue(self._id, run.id, run.payload(), now=now)
        self._append(run, now)
        emit(EventType.QUEUE_ENQUEUED, session_id=self._id, position=decision.position)
        self._announce_positions()

    async def restore(self) -> None:
        """Reload runs stored before a restart (they resume in order)."""
        stored = await self._rt.store.pending(self._id)
        self._runs.extend(PendingRun.from_payload(r.id, r.created_at, r.payload) for r in stored)
        if stored:
            self._changed.set()

    async def clear(self, reason: str) -> int:
        """Drop every queued run (``/stop``); returns how many."""
        runs = self.drain()
        self._changed.set()  # ends a collect debounce waiting on these runs
        await self._drop(runs, reason)
        return len(runs)

    def drain(self) -> list[PendingRun]:
        """Empty the queue and return its runs; the caller tells their senders."""
        runs = list(self._runs)
        self._runs.clear()
        self._told.clear()
        return runs

    # ------------------------------------------------------------ the worker

    async def next_turn(self) -> list[PendingRun]:
        """Wait as the policy says, then take the runs of the next turn off the queue."""
        while True:
            decision = take(self._state(turn_running=False), self._rt.clock())
            if isinstance(decision, WaitForWork):
                self._changed.clear()
                await self._changed.wait()
            elif isinstance(decision, Debounce):
                await self._until_change(decision.seconds)
            else:
                runs = self._take(decision.run_ids)
                self._announce_positions()
                return runs

    def put_back(self, runs: list[PendingRun]) -> None:
        """``runs`` were taken but their turn never committed: first again, in order."""
        self._runs.extendleft(reversed(runs))

    def abandon_unstored(self, error: BaseException) -> None:
        """The worker stopped for good: runs handed to it but never committed are gone
        (their senders get ``error``; nothing of them was stored)."""
        gone = [r for r in self._runs if not r.persisted]
        if gone:
            self._runs = deque(r for r in self._runs if r.persisted)
            self.receipts.fail(gone, error)

    # ------------------------------------------------------------ internals

    def _append(self, run: PendingRun, now: float) -> None:
        self._runs.append(run)
        self._last_arrival = now
        self._changed.set()

    def _take(self, run_ids: tuple[str, ...]) -> list[PendingRun]:
        """Remove ``run_ids`` — the oldest runs, as the policy names them — from the front."""
        taken = [self._runs.popleft() for _ in run_ids]
        assert tuple(r.id for r in taken) == run_ids, "decided and applied with no await between"
        for run in taken:
            self._told.pop(run.id, None)
        return taken

    async def _drop(self, runs: list[PendingRun], reason: str) -> None:
        self.receipts.accept(runs)  # a handed-over run's sender learns it from its handle
        await self._rt.store.drop_runs([r.id for r in runs])
        for run in runs:
            self._publish(Dropped(self._id, run.id, reason=reason))

    def _announce_positions(self) -> None:
        for position, run in enumerate(self._runs, start=1):
            told = self._told.get(run.id)
            if told == position or (told is None and not run.queued_behind):
                continue  # unchanged, or handed to an idle worker (never told a place)
            self._told[run.id] = position
            self._publish(Queued(self._id, run.id, position=position))

    async def _until_change(self, seconds: float) -> None:
        """Collect mode's debounce: wait ``seconds`` or until runs arrive or leave,
        through the runtime's sleep (virtual time in tests)."""
        self._changed.clear()
        sleeper = asyncio.ensure_future(self._rt.sleep(seconds))
        change = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait((sleeper, change), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeper, change):
                task.cancel()
            await asyncio.wait((sleeper, change))
