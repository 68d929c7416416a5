"""The :class:`~beamclaw_core.conversation.port.Conversation` port over a :class:`Core` in
this process: what the gateway's front ends, its channel adapters and the embedded TUI use.

Turns are *detached*: each sent turn is consumed by a task this object owns, never by
the caller, so a client that disconnects mid-stream loses nothing (the turn completes and
is stored), approvals are answered by the request's policy even when nobody listens, and
``on_done`` always runs. :meth:`drain` bounds how long a shutdown waits for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.conversation.port import (
    AnswerOutcome,
    HistoryEntry,
    HistoryPage,
    OnDone,
    OnEvent,
    PendingApprovalInfo,
    TurnRequest,
)
from beamclaw_core.loop.inputs import Decision
from beamclaw_core.loop.turn_events import ApprovalRequested, TurnEvent
from beamclaw_core.sessions.bus import Subscription
from beamclaw_core.sessions.control import SessionInfo
from beamclaw_core.sessions.errors import UnknownSessionError
from beamclaw_core.sessions.fold import TurnFold, TurnResult
from beamclaw_obs import cancel_and_wait


class DetachedTurn:
    """A sent turn whose events a background reader puts here, with its result once it
    ends (the :class:`~beamclaw_core.conversation.port.Turn` both implementations hand out:
    this process's consumer task, or a remote client's socket reader).

    Invariant: :meth:`finish` is called once, after the last :meth:`put`; ``events``
    then ends and ``result`` answers."""

    def __init__(self, session_id: str, turn_id: str) -> None:
        self._session_id = session_id
        self._turn_id = turn_id
        self._events: asyncio.Queue[TurnEvent | None] = asyncio.Queue()
        self._result: TurnResult | None = None
        self._waiters: list[asyncio.Future[TurnResult]] = []
        """One future per caller still waiting in :meth:`result` (cancelling a caller
        cancels its own future only)."""

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def turn_id(self) -> str:
        return self._turn_id

    async def events(self) -> AsyncIterator[TurnEvent]:
        while (event := await self._events.get()) is not None:
            yield event

    async def result(self) -> TurnResult:
        """The turn's result, once it ended; resumes one loop pass after :meth:`finish`
        (a shared future behind ``asyncio.shield`` took two)."""
        if self._result is not None:
            return self._result
        waiter: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        finally:
            if waiter.cancelled() and waiter in self._waiters:  # (finish may have run)
                self._waiters.remove(waiter)

    def put(self, event: TurnEvent) -> None:
        """The reader's next event of the turn."""
        self._events.put_nowait(event)

    def finish(self, result: TurnResult) -> None:
        """The turn ended with ``result`` (after its last event)."""
        if self._result is None:
            self._result = result
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(result)
        self._events.put_nowait(None)


class LocalConversation:
    """Conversations of the :class:`Core` that ``core`` returns (see the module docstring).

    ``core`` is called on each use, so one object serves a runtime that stops and starts
    again (it raises whatever the owner raises when no core runs)."""

    def __init__(self, core: Callable[[], Core]) -> None:
        self._core = core
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def core(self) -> Core:
        return self._core()

    @property
    def running(self) -> int:
        """Detached turns still being consumed."""
        return len(self._tasks)

    def session_id(self, request: TurnRequest) -> str:
        """The conversation ``request`` goes to."""
        return request.session_id or self._core().session_id(request.address)

    async def send(
        self,
        request: TurnRequest,
        *,
        on_event: OnEvent | None = None,
        on_done: OnDone | None = None,
    ) -> DetachedTurn:
        core = self._core()
        handle = await core.send(
            request.address,
            request.content,
            source_message_id=request.source_message_id,
            session_id=request.session_id,
            drafts=request.drafts,
            scheduled=request.scheduled,
            model=request.model,
        )
        turn = DetachedTurn(handle.session_id, handle.turn_id)

        async def pump() -> None:
            fold = TurnFold(turn.session_id, turn.turn_id)
            try:
                async for event in handle.events():
                    if isinstance(event, ApprovalRequested) and request.approval_mode == "deny":
                        await core.answer_approval(event.session_id, event.request_id, "no")
                    fold.feed(event)
                    turn.put(event)
                    if on_event is not None:
                        await on_event(event)
                result = fold.end(await handle.result())
            except Exception as exc:
                logger.exception("turn {} consumer failed", turn.turn_id)
                result = TurnResult(
                    turn.session_id,
                    turn.turn_id,
                    "failed",
                    error_kind="internal",
                    error_message=f"{type(exc).__name__}: {exc}",
                )
            turn.finish(result)
            if on_done is not None:
                try:
                    await on_done(result)
                except Exception:
                    logger.exception("turn {} completion callback failed", turn.turn_id)

        task = asyncio.create_task(pump(), name=f"turn-{turn.turn_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return turn

    async def subscribe(self, session_id: str, *, after_seq: int | None = None) -> Subscription:
        return await self._core().subscribe(session_id, after_seq=after_seq)

    async def answer(self, approval_id: str, decision: Decision) -> AnswerOutcome:
        outcome, _info = await self._core().answer_approval_by_id(approval_id, decision)
        return outcome

    async def answer_with_info(
        self, approval_id: str, decision: Decision
    ) -> tuple[AnswerOutcome, PendingApprovalInfo | None]:
        """:meth:`answer`, with what was pending when it was answered."""
        return await self._core().answer_approval_by_id(approval_id, decision)

    async def pending_approvals(self, session_id: str | None = None) -> list[PendingApprovalInfo]:
        return await self._core().pending_approvals(session_id)

    async def stop(self, session_id: str) -> int:
        return await self._core().cancel(session_id)

    async def new(self, session_id: str) -> None:
        await self._core().reset(session_id)

    async def history(
        self, session_id: str, *, limit: int | None = 50, before_seq: int | None = None
    ) -> HistoryPage:
        core = self._core()
        if await core.store.get(session_id) is None:
            raise UnknownSessionError(session_id)
        event_seq = await core.event_seq(session_id)
        rows, older, total = await core.store.message_page(
            session_id, limit=limit, before_seq=before_seq
        )
        entries = tuple(
            HistoryEntry(r.seq, r.message, r.created_at) for r in rows if r.message is not None
        )
        return HistoryPage(session_id, entries, older > len(entries), total, event_seq)

    async def info(self, session_id: str) -> SessionInfo:
        return await self._core().status(session_id)

    async def sessions(self, *, agent: str | None = None) -> list[SessionInfo]:
        infos = [
            s
            for s in await self._core().list_sessions()
            if s.parent_id is None and (agent is None or s.agent_id == agent)
        ]
        infos.sort(key=lambda s: s.last_activity_at, reverse=True)
        return infos

    async def drain(self, grace_seconds: float = 5.0) -> None:
        """Wait (bounded) for detached turns' consumers, then cancel what is left."""
        if self._tasks:
            _done, pending = await asyncio.wait(list(self._tasks), timeout=grace_seconds)
            await cancel_and_wait(pending)
