"""A session's recent events, numbered, so a client that missed some can catch up.

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

    def _now_us(self) -> int:
        return int(self._clock() * 1_000_000)

    def stamp(self, event: TurnEvent) -> TurnEvent:
        """``event`` with the next number, kept in the ring (the oldest may drop out)."""
        seq = max(self.last_seq + 1, self._now_us())
        stamped = dataclasses.replace(event, seq=seq)
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
