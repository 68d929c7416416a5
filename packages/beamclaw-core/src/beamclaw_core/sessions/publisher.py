"""One lane's outgoing events: their numbering and replay journal, its bus, and the turn
handles still waiting for their turn to end.

Invariants: every event is numbered (``seq``) and journaled before any subscriber sees
it, so what a subscriber receives carries the number it resumes from. A subscription
from a number gets the journal's later events, then the live ones, with nothing between
them (no await separates the two). A handle is subscribed before its run can produce any
event, gets exactly one terminal event, and leaves the registry with it. A run merged
into another's turn (``collect``) is an alias of that turn: it sees the turn's events and
ends with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from beamclaw_core.loop.turn_events import Notice, RunsMerged, TurnDone, TurnEvent
from beamclaw_core.sessions.bus import SessionBus, Subscription, TurnHandle
from beamclaw_core.sessions.journal import DEFAULT_CAPACITY, EventJournal


class LanePublisher:
    """Publishes a lane's events and ends its turn handles."""

    def __init__(
        self,
        session_id: str,
        buffer: int,
        clock: Callable[[], float],
        replay: int = DEFAULT_CAPACITY,
        relay: Callable[[TurnEvent], None] | None = None,
    ) -> None:
        self._session_id = session_id
        self._relay = relay
        """Cluster hook: the lane's own events also go to the other nodes."""
        self.bus = SessionBus(buffer)
        self.journal = EventJournal(session_id, clock, min(replay, buffer - 1))
        """Kept below the subscriber buffer, so a whole replay always fits in it."""
        self._handles: dict[str, TurnHandle] = {}
        self._aliases: dict[str, str] = {}

    @property
    def last_seq(self) -> int:
        """The number of the latest event (a subscription from it gets only new ones)."""
        return self.journal.last_seq

    def publish(self, event: TurnEvent) -> None:
        event = self.journal.stamp(event)
        if self._relay is not None:  # numbered: the owner's number is the session's
            self._relay(event)
        self._deliver(event)

    def mirror(self, event: TurnEvent) -> None:
        """Publish an event here only: one the session's owner on another node relayed
        (cluster mode), so this node's subscribers and handles see its turns. A relayed
        :class:`RunsMerged` only joins the runs here to their turn."""
        if isinstance(event, RunsMerged):
            if event.turn_id is not None:
                self._alias(event.turn_id, event.run_ids)
            return
        adopted = self.journal.adopt(event)
        if adopted is not None:
            self._deliver(adopted)

    def backfill(self, events: list[TurnEvent], *, complete: bool) -> None:
        """Kept events from the session's relayed stream (cluster mode: a client resumes
        here a stream it read at another node); see :meth:`EventJournal.backfill`."""
        self.journal.backfill(
            [e for e in events if not isinstance(e, RunsMerged)], complete=complete
        )

    def _deliver(self, event: TurnEvent) -> None:
        self.bus.publish(event)
        if event.terminal and event.turn_id is not None:
            self._ended(event.turn_id, event)

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        """Every event from now on; with ``after_seq``, first every kept event numbered
        above it (raises :class:`~beamclaw_core.sessions.journal.ReplayGapError` or
        :class:`~beamclaw_core.sessions.journal.FutureSequenceError`)."""
        missed = [] if after_seq is None else self.journal.since(after_seq)
        subscription = self.bus.subscribe()
        for event in missed:
            subscription.offer(event)
        subscription.replayed = len(missed)
        subscription.opened_at_seq = self.journal.last_seq
        return subscription

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
        """``run_ids`` became part of ``primary_id``'s turn (here, and — cluster mode —
        at the other nodes, where some of their senders may wait)."""
        self._alias(primary_id, run_ids)
        if self._relay is not None and run_ids:
            self._relay(RunsMerged(self._session_id, primary_id, run_ids=tuple(run_ids)))

    def _alias(self, primary_id: str, run_ids: Iterable[str]) -> None:
        for run_id in run_ids:
            self._aliases[run_id] = primary_id

    def reply(self, run_id: str, text: str, *, here: bool = False) -> None:
        """Answer a run without a turn (commands): a notice, then ``TurnDone``.
        ``here``: on this node only (cluster mode: a run of a session another node owns)."""
        if here:  # not the session's event: unnumbered, kept nowhere
            seq = self.journal.last_seq
            self._deliver(Notice(self._session_id, run_id, text, seq=seq))
            self._deliver(TurnDone(self._session_id, run_id, text=text, seq=seq))
            return
        self.publish(Notice(self._session_id, run_id, text))
        self.publish(TurnDone(self._session_id, run_id, text=text))

    def waiting(self, run_id: str) -> bool:
        """A handle on ``run_id`` still waits for its turn's end."""
        return run_id in self._handles

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
