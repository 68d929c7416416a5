"""The turn handles of one lane that still wait for their turn to end.

Invariants: a handle is subscribed before its run can produce any event, gets exactly
one terminal event, and leaves this registry with it. A run merged into another's turn
(``collect``) is an alias of that turn: it sees the turn's events and ends with it.
"""

from __future__ import annotations

from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.sessions.bus import SessionBus, TurnHandle


class TurnHandles:
    """Open turn handles by run id, and the aliases of merged runs."""

    def __init__(self, session_id: str, bus: SessionBus) -> None:
        self._session_id = session_id
        self._bus = bus
        self._handles: dict[str, TurnHandle] = {}
        self._aliases: dict[str, str] = {}

    def open(self, run_id: str, drafts: bool = True) -> TurnHandle:
        """A handle on ``run_id``'s turn (``drafts``: it wants streamed text)."""

        def mine(event: TurnEvent) -> bool:
            return event.turn_id == run_id or (
                event.turn_id is not None and self._aliases.get(run_id) == event.turn_id
            )

        handle = TurnHandle(
            self._session_id, run_id, self._bus.subscribe(mine, until_terminal=True, drafts=drafts)
        )
        self._handles[run_id] = handle
        return handle

    def merge(self, primary_id: str, run_ids: list[str]) -> None:
        """``run_ids`` became part of ``primary_id``'s turn."""
        for run_id in run_ids:
            self._aliases[run_id] = primary_id

    def ended(self, event: TurnEvent) -> None:
        """``event`` was published: if it ends a turn, its handles (and aliases) finish."""
        if not event.terminal or event.turn_id is None:
            return
        turn_id = event.turn_id
        for run_id in [turn_id, *[a for a, t in self._aliases.items() if t == turn_id]]:
            handle = self._handles.pop(run_id, None)
            if handle is not None:
                handle._finish(event)  # pyright: ignore[reportPrivateUsage]
            self._aliases.pop(run_id, None)

    def first_waiting(self) -> str | None:
        """The run id of some handle still waiting (None when none is)."""
        return next(iter(self._handles), None)
