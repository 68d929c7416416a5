r"""A session's recent events, numbered, so a client that missed some can catch up.

Every event a lane publishes is stamped with a sequence number ``seq`` and kept in a
bounded ring. A client that reconnects names the last ``seq`` it saw and receives every
later event still in the ring, then the live ones, each exactly once.

Numbering is a hybrid logical clock in microseconds: ``seq = max(previous + 1, now_us)``.
So within one lane's life the numbers strictly increase, and a lane rebuilt later (after
idle eviction or a restart) numbers its events above every earlier one without storing
anything: its clock has moved on past the microseconds the earlier events used (a lane
publishes far fewer than one event per microsecond).

Invariants:

* ``floor`` is the number below which the ring cannot answer: the seq of the last event
  the ring dropped, or the moment this journal started (events before it belonged to an
  earlier life of the lane and are gone). Asking from below ``floor`` is a
  :class:`ReplayGapError`; the client reloads the history instead, which holds every
  committed message.
* Asking from above ``last_seq`` is a :class:`FutureSequenceError`: no client can have
  seen a number that was never given out.
* ``since(s)`` for ``floor <= s <= last_seq`` is exactly the events with seq > ``s``, in
  order.

Cluster mode (docs/scale-out.md): the owner's numbers are the session's, at every node. A
node that shows a session another node runs :meth:`~EventJournal.adopt`\ s the relayed
events with their numbers (renumbering only one its own numbers already passed, e.g.
under clock skew), and :meth:`~EventJournal.backfill`\ s from the relayed stream when a
client resumes there; a node taking a session over first :meth:`~EventJournal.advance`\ s
past the last relayed number.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable

from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.sessions.errors import FutureSequenceError, ReplayGapError

DEFAULT_CAPACITY = 512


class EventJournal:
    """Numbers a session's events and keeps the last ``capacity`` of them."""

    def __init__(self, session_id: str, clock: Callable[[], float], capacity: int) -> None:
        self._session_id = session_id
        self._clock = clock
        self._ring: deque[TurnEvent] = deque(maxlen=max(capacity, 0))
        self.floor = self._now_us()
        self.last_seq = self.floor

    @property
    def capacity(self) -> int:
        return self._ring.maxlen or 0

    def _now_us(self) -> int:
        return int(self._clock() * 1_000_000)

    def stamp(self, event: TurnEvent) -> TurnEvent:
        """``event`` with the next number, kept in the ring (the oldest may drop out)."""
        seq = max(self.last_seq + 1, self._now_us())
        return self._keep(dataclasses.replace(event, seq=seq))

    def adopt(self, event: TurnEvent) -> TurnEvent | None:
        """A relayed event, kept under the owner's number when it is above every number
        here, else renumbered; None when it is kept already (read twice)."""
        if event.seq <= 0:
            return self.stamp(event)
        if event.seq <= self.last_seq:
            if any(kept.seq == event.seq for kept in self._ring):
                return None
            return self.stamp(event)
        return self._keep(event)

    def advance(self, seq: int) -> None:
        """Number every later event above ``seq`` (the session's last relayed number)."""
        self.last_seq = max(self.last_seq, seq)

    def backfill(self, events: list[TurnEvent], *, complete: bool) -> None:
        """Merge ``events`` (the session's newest relayed events, oldest first, numbered)
        into the ring. ``complete``: they are all the session ever relayed, so nothing is
        missing below the first of them; otherwise numbers below it cannot be answered."""
        numbered = [e for e in events if e.seq > 0]
        if not numbered:
            return
        first = numbered[0].seq
        floor = min(self.floor, first - 1) if complete else first
        known = {e.seq: e for e in self._ring if e.seq > floor}
        for event in numbered:
            known.setdefault(event.seq, event)
        ordered = [known[seq] for seq in sorted(known)]
        capacity = self.capacity
        if len(ordered) > capacity:
            floor = ordered[-capacity - 1].seq if capacity else ordered[-1].seq
            ordered = ordered[len(ordered) - capacity :]
        self._ring.clear()
        self._ring.extend(ordered)
        self.floor = floor
        self.last_seq = max(self.last_seq, numbered[-1].seq)

    def _keep(self, stamped: TurnEvent) -> TurnEvent:
        seq = stamped.seq
        self.last_seq = seq
        ring = self._ring
        if ring.maxlen == 0:
            self.floor = seq
        elif len(ring) == ring.maxlen:
            self.floor = ring[0].seq
        ring.append(stamped)
        return stamped

    def since(self, after_seq: int) -> list[TurnEvent]:
        """The kept events numbered above ``after_seq``, oldest first (see the invariants)."""
        if after_seq > self.last_seq:
            raise FutureSequenceError(self._session_id, after_seq, self.last_seq)
        if after_seq < self.floor:
            raise ReplayGapError(self._session_id, after_seq, self.floor)
        if after_seq == self.last_seq:
            return []
        return [e for e in self._ring if e.seq > after_seq]
