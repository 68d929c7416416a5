"""Which loaded lanes may leave memory: when each was last used, and who holds it now.

Pure bookkeeping for :class:`~beamclaw_core.api.Core`, which owns the map of lanes and
calls this under its lock. A lane is *evictable* when it is idle (no turn running or
about to run, nothing queued, hence no approval pending), nobody is subscribed to it (a
turn handle's subscription ends with its turn), nobody holds a pin on it (a caller
between finding the lane and handing it work), and it was not used for ``idle_seconds``.
Everything else a lane holds is in the store, so it is rebuilt from there on demand.
"""

from __future__ import annotations

from collections.abc import Callable

from beamclaw_core.sessions.lane import SessionLane


class LaneUsage:
    """Last use and pins per loaded lane, keyed by session id."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._last_used: dict[str, float] = {}
        self._pins: dict[str, int] = {}

    def use(self, session_id: str, *, pin: bool = False) -> None:
        """The lane was used now; ``pin``: and is held until :meth:`unpin`."""
        self._last_used[session_id] = self._clock()
        if pin:
            self._pins[session_id] = self._pins.get(session_id, 0) + 1

    def unpin(self, session_id: str) -> None:
        """Release one pin (the holder is done; that counts as a use of a lane still
        loaded)."""
        left = self._pins.pop(session_id, 1) - 1
        if left > 0:
            self._pins[session_id] = left
        if session_id in self._last_used:
            self._last_used[session_id] = self._clock()

    def forget(self, session_id: str) -> None:
        """The lane left memory."""
        self._last_used.pop(session_id, None)

    def clear(self) -> None:
        self._last_used.clear()

    def evictable(self, lane: SessionLane, idle_seconds: float) -> bool:
        """Whether ``lane`` may leave memory now (see the module docstring)."""
        last = self._last_used.get(lane.id, lane.last_activity_at)
        return (
            lane.idle()
            and lane.bus.open_subscriptions() == 0
            and lane.id not in self._pins
            and self._clock() - last >= idle_seconds
        )
