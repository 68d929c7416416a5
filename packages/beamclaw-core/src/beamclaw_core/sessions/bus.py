"""Per-session event fan-out with bounded subscriber buffers.

Publishing never blocks and never fails: each subscriber has a bounded queue; a
subscriber whose queue is full is marked *lagging* and dropped (its iterator ends after
what it already buffered). The turn goes on and is persisted regardless. A turn handle
additionally keeps its terminal event in a future, so a consumer that lagged or stopped
reading can still ``await handle.result()``.

A subscription leaves its bus the moment it closes (by its owner, by lagging, after its
terminal event, or when the bus closes): the bus holds open subscriptions only, so a
reader that went away neither keeps memory nor makes turns stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.sessions.errors import SessionError
from beamclaw_core.sessions.fold import result_of

DEFAULT_BUFFER = 1024
_END = object()


class Subscription:
    """An async iterator over the events accepted by ``accept``."""

    def __init__(
        self,
        accept: Callable[[TurnEvent], bool],
        size: int,
        *,
        until_terminal: bool,
        drafts: bool = True,
    ):
        self._accept = accept
        self.drafts = drafts
        """The subscriber wants the answer's text as it streams (``TextChunk`` drafts)."""
        self._queue: asyncio.Queue[object] = asyncio.Queue(maxsize=size + 1)
        self._size = size
        self._until_terminal = until_terminal
        self.lagging = False
        self.closed = False
        self.replayed = 0
        """Events written into it from the session's journal before live ones."""
        self.opened_at_seq = 0
        """The session's latest event number when it opened (0: not numbered)."""
        self._on_close: Callable[[Subscription], None] | None = None
        """Set by the bus: removes this subscription from it."""

    def offer(self, event: TurnEvent) -> None:
        if self.closed or not self._accept(event):
            return
        if self._queue.qsize() >= self._size:
            self.lagging = True
            self.close()
            return
        self._queue.put_nowait(event)
        if self._until_terminal and event.terminal:
            self.close()

    def close(self) -> None:
        """Stop receiving: the iterator ends after what is buffered; the bus forgets it."""
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(_END)
            if self._on_close is not None:
                self._on_close(self)
                self._on_close = None

    def __aiter__(self) -> AsyncIterator[TurnEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[TurnEvent]:
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            assert isinstance(item, TurnEvent)
            yield item


class SessionBus:
    """Fans a session's events out to its subscribers."""

    def __init__(self, buffer: int = DEFAULT_BUFFER) -> None:
        self.buffer = buffer
        self._subs: dict[Subscription, None] = {}
        """The open subscriptions, in subscription order."""

    def subscribe(
        self,
        accept: Callable[[TurnEvent], bool] | None = None,
        *,
        until_terminal: bool = False,
        drafts: bool = True,
    ) -> Subscription:
        sub = Subscription(
            accept or (lambda _e: True), self.buffer, until_terminal=until_terminal, drafts=drafts
        )
        sub._on_close = self._forget  # pyright: ignore[reportPrivateUsage]
        self._subs[sub] = None
        return sub

    def _forget(self, sub: Subscription) -> None:
        self._subs.pop(sub, None)

    def open_subscriptions(self) -> int:
        """How many subscriptions are open (closed ones are already gone)."""
        return len(self._subs)

    def wants_drafts(self) -> bool:
        """Whether an open subscription wants streamed text (else nobody sees drafts)."""
        return any(sub.drafts for sub in self._subs)

    def publish(self, event: TurnEvent) -> None:
        for sub in list(self._subs):
            sub.offer(event)

    def close(self) -> None:
        for sub in list(self._subs):
            sub.close()


class TurnHandle:
    """What :meth:`Core.send` returns: the turn's events and its final outcome."""

    def __init__(self, session_id: str, turn_id: str, subscription: Subscription) -> None:
        self.session_id = session_id
        self.turn_id = turn_id
        self._subscription = subscription
        self._result: asyncio.Future[TurnEvent] = asyncio.get_running_loop().create_future()

    def _finish(self, event: TurnEvent) -> None:
        if not self._result.done():
            self._result.set_result(event)

    def events(self) -> AsyncIterator[TurnEvent]:
        """The turn's events as they happen, ending with its terminal event.

        Reading is optional: an unread handle never blocks the turn (the buffer is bounded;
        when it overflows the iterator ends early and :attr:`lagging` is set).
        """
        return aiter(self._subscription)

    @property
    def lagging(self) -> bool:
        return self._subscription.lagging

    def close(self) -> None:
        """Stop receiving the turn's events (a reader that went away); :meth:`result`
        still arrives."""
        self._subscription.close()

    async def result(self) -> TurnEvent:
        """The terminal event: ``TurnDone``, ``TurnError``, ``Cancelled`` or ``Dropped``."""
        return await asyncio.shield(self._result)

    async def text(self) -> str:
        """The whole answer; raises :class:`TurnFailed` when the turn did not complete."""
        event = await self.result()
        ended = result_of(self.session_id, self.turn_id, event)
        if ended.status == "completed":
            return ended.text
        raise TurnFailed(event)


class TurnFailed(SessionError):  # noqa: N818 - reads as "the turn failed"
    """The turn ended without an answer (error, cancel, drop)."""

    def __init__(self, event: TurnEvent) -> None:
        self.event = event
        ended = result_of(event.session_id, event.turn_id or "", event)
        detail = ended.error_message if ended.status == "failed" else type(event).__name__
        super().__init__(f"turn {event.turn_id} ended without an answer: {detail}")
