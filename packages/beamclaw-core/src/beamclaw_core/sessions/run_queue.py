"""The runs waiting in one lane, in memory (the stored queue is ``pending_runs``).

Invariants: runs leave only from the front (taken, dropped as the oldest) or all at once
(cleared), except runs that were never stored, which leave when the worker stops for
good; a sender is told a new position only when its run's place changed (1 = next).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from beamclaw_core.sessions.queue_policy import QueueState, Waiting
from beamclaw_core.sessions.runs import PendingRun
from beamclaw_core.settings import QueueSettings


class RunQueue:
    """One lane's queued runs, oldest first, and the positions their senders were told."""

    def __init__(self) -> None:
        self._runs: deque[PendingRun] = deque()
        self._told: dict[str, int] = {}
        self._last_arrival = 0.0

    def __len__(self) -> int:
        return len(self._runs)

    def __iter__(self) -> Iterator[PendingRun]:
        return iter(self._runs)

    def state(self, settings: QueueSettings, *, turn_running: bool) -> QueueState:
        """The queue as :mod:`~beamclaw_core.sessions.queue_policy` sees it."""
        return QueueState(
            queued=tuple(Waiting(r.id, r.queued_behind) for r in self._runs),
            turn_running=turn_running,
            mode=settings.mode,
            cap=settings.cap,
            debounce=settings.debounce_ms / 1000,
            last_arrival=self._last_arrival,
        )

    def append(self, run: PendingRun, now: float) -> None:
        self._runs.append(run)
        self._last_arrival = now

    def restore(self, runs: list[PendingRun]) -> None:
        """Runs stored before a restart, in order, behind anything queued."""
        self._runs.extend(runs)

    def take(self, run_ids: tuple[str, ...]) -> list[PendingRun]:
        """Remove ``run_ids`` — the oldest runs, as the policy named them — from the front."""
        taken = [self._runs.popleft() for _ in run_ids]
        assert [r.id for r in taken] == list(run_ids), "the policy names the oldest runs"
        for run in taken:
            self._told.pop(run.id, None)
        return taken

    def put_back(self, runs: list[PendingRun]) -> None:
        """``runs`` (taken, their turn never committed) are first again, in order."""
        self._runs.extendleft(reversed(runs))

    def clear(self) -> list[PendingRun]:
        runs = list(self._runs)
        self._runs.clear()
        self._told.clear()
        return runs

    def remove_unstored(self) -> list[PendingRun]:
        """Remove and return the runs never stored (handed over, not yet committed)."""
        gone = [r for r in self._runs if not r.persisted]
        if gone:
            self._runs = deque(r for r in self._runs if r.persisted)
        return gone

    def moved(self) -> list[tuple[str, int]]:
        """The runs whose place changed since their sender was last told, with their new
        position; a run handed to an idle worker is never told one."""
        changed: list[tuple[str, int]] = []
        for position, run in enumerate(self._runs, start=1):
            told = self._told.get(run.id)
            if told == position or (told is None and not run.queued_behind):
                continue
            self._told[run.id] = position
            changed.append((run.id, position))
        return changed
