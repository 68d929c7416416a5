"""The lane's queue decisions (seed 004 ADR-035/040/041), pure: state and input in, a
decision out. No asyncio, no clock, no I/O: the lane applies what is decided here.

Two questions, two functions:

* :func:`arrive` — a message (or command) arrives: act at once (a command), hand it
  straight to an idle worker, or queue it (dropping the oldest beyond the cap, cancelling
  the running turn in ``interrupt`` mode).
* :func:`take` — the worker is free: what does it take next (one run in ``followup`` and
  ``interrupt``; everything, merged into one turn, in ``collect``), or how long must it
  wait first (the ``collect`` debounce).

Invariants (property-tested in ``tests/sessions/test_queue_policy.py``):

* Applying an :class:`Enqueue` (drop ``dropped`` from the front, append the run) leaves at
  most ``cap`` runs queued; ``dropped`` is always the oldest runs, in order, and every run
  that leaves the queue without being taken appears in exactly one ``dropped``.
* Commands never queue; messages share one priority and are taken in arrival order.
* :class:`HandOver` only when no turn runs and nothing is queued; ``interrupt`` only
  while a turn runs; :class:`Take` never names a run that is not queued.
* ``collect`` takes the whole queue — except that a *scheduled* run (a scheduler job or a
  heartbeat) is never merged with anything: it is taken alone when it is first, and a
  run of people's messages is taken only up to the first scheduled run behind it; the
  debounce waits only for runs that arrived behind a turn, and only until ``debounce``
  seconds after the newest arrival.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

QueueMode = Literal["followup", "collect", "interrupt"]


@dataclass(frozen=True, slots=True)
class Waiting:
    """A queued run as the policy sees it."""

    run_id: str
    behind: bool
    """It arrived while the lane was busy (``collect`` debounces such runs)."""
    scheduled: bool = False
    """Sent by the scheduler, not a person: ``collect`` never merges it with another run."""


@dataclass(frozen=True, slots=True)
class QueueState:
    """What the lane knows when a decision is due."""

    queued: tuple[Waiting, ...] = ()
    """Oldest first."""
    turn_running: bool = False
    mode: QueueMode = "collect"
    cap: int = 20
    debounce: float = 0.0
    """``collect``: seconds without a new arrival before the queue is taken."""
    last_arrival: float = 0.0
    """When the newest queued run arrived (the debounce window's start)."""

    @property
    def busy(self) -> bool:
        """A turn runs or runs wait: a new message waits behind them."""
        return self.turn_running or bool(self.queued)


@dataclass(frozen=True, slots=True)
class Arrival:
    """A message or an in-chat command, as it reaches the lane."""

    run_id: str
    command: str | None = None
    """The in-chat command it is (``/stop`` …), None for an ordinary message."""


@dataclass(frozen=True, slots=True)
class ActNow:
    """A command: it acts at once and never queues (its priority is above every message)."""

    command: str


@dataclass(frozen=True, slots=True)
class HandOver:
    """Nothing runs or waits: the run goes straight to the worker without being stored
    first; its turn's first commit makes it durable."""


@dataclass(frozen=True, slots=True)
class Enqueue:
    """The lane is busy: store the run and queue it at ``position`` (1 = next)."""

    position: int
    dropped: tuple[str, ...] = ()
    """The oldest queued runs, dropped first to keep within the cap (senders told)."""
    interrupt: bool = False
    """Cancel the running turn (``interrupt`` mode)."""


ArrivalDecision = ActNow | HandOver | Enqueue


@dataclass(frozen=True, slots=True)
class WaitForWork:
    """Nothing is queued."""


@dataclass(frozen=True, slots=True)
class Debounce:
    """``collect``: wait ``seconds`` (or until the next arrival), then decide again."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Take:
    """Take these runs (oldest first) off the queue; they become one turn."""

    run_ids: tuple[str, ...]


TakeDecision = WaitForWork | Debounce | Take


def arrive(state: QueueState, arrival: Arrival) -> ArrivalDecision:
    """What happens to ``arrival`` given ``state``."""
    if arrival.command is not None:
        return ActNow(arrival.command)
    if not state.busy:
        return HandOver()
    excess = max(0, len(state.queued) - state.cap + 1)
    return Enqueue(
        position=len(state.queued) - excess + 1,
        dropped=tuple(w.run_id for w in state.queued[:excess]),
        interrupt=state.mode == "interrupt" and state.turn_running,
    )


def take(state: QueueState, now: float) -> TakeDecision:
    """What the free worker takes at ``now``."""
    if not state.queued:
        return WaitForWork()
    first = state.queued[0]
    if state.mode != "collect" or first.scheduled:
        return Take((first.run_id,))
    if state.debounce > 0 and any(w.behind for w in state.queued):
        wait = state.last_arrival + state.debounce - now
        if wait > 0:
            return Debounce(wait)
    people: list[str] = []
    for waiting in state.queued:
        if waiting.scheduled:
            break
        people.append(waiting.run_id)
    return Take(tuple(people))
