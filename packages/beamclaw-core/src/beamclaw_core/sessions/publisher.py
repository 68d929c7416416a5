"""One lane's outgoing events: its bus, and the turn handles still waiting for their turn
to end.

Invariants: a handle is subscribed before its run can produce any event, gets exactly
one terminal event, and leaves the registry with it. A run merged into another's turn
(``collect``) is an alias of that turn: it sees the turn's events and ends with it.
"""

from __future__ import annotations

from collections.abc import Callable

from beamclaw_core.loop.turn_events import Notice, TurnDone, TurnEvent
from beamclaw_core.sessions.bus import SessionBus, Subscription, TurnHandle


class LanePublisher:
    """Publishes a lane's events and ends its turn handles."""

    def __init__(self, session_id: str, buffer: int) -> None:
        self._session_id = session_id
        self.bus = SessionBus(buffer)
        self._handles: dict[str, TurnHandle] = {}
        self._aliases: dict[str, str] = {}

    def publish(self, event: TurnEvent) -> None:
        self.bus.publish(event)
        if event.terminal and event.turn_id is not None:
            self._ended(event.turn_id, event)

    def subscribe(self) -> Subscription:
        """Every event from now on."""
        return self.bus.subscribe()

    def open(self, run_id: str, drafts: bool = True) -> TurnHandle:
        """A handle on ``run_id``'s turn (``drafts``: it wants streamed text)."""

        def mine(event: TurnEvent) -> bool:
            return event.turn_id == run_id or (
                event.turn_id is not None and self._aliases.get(run_id) == event.turn_id
            )

        subscription = self.bus.subscribe(mine, until_terminal=True, drafts=drafts)
        handle = self._handles[run_id] = TurnHandle(self._session_id, run_id, subscription)
        return handle

    def merge(self, primary_id: str, run_ids: list[str]) -> None:
        """``run_ids`` became part of ``primary_id``'s turn."""
        for run_id in run_ids:
            self._aliases[run_id] = primary_id

    def reply(self, run_id: str, text: str) -> None:
        """Answer a run without a turn (commands): a notice, then ``TurnDone``."""
        self.publish(Notice(self._session_id, run_id, text))
        self.publish(TurnDone(self._session_id, run_id, text=text))

    def end_unfinished(self, terminal: Callable[[str], TurnEvent]) -> None:
        """Give every handle still waiting the terminal event ``terminal(run_id)``: no
        worker is left to end its turn."""
        while self._handles:
            self.publish(terminal(next(iter(self._handles))))

    def _ended(self, turn_id: str, event: TurnEvent) -> None:
        for run_id in [turn_id, *[a for a, t in self._aliases.items() if t == turn_id]]:
            handle = self._handles.pop(run_id, None)
            if handle is not None:
                handle._finish(event)  # pyright: ignore[reportPrivateUsage]
            self._aliases.pop(run_id, None)
