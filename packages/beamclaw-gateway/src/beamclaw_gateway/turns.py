"""Turns started by request/response entry points (``/v1``, webhooks, A2A), run detached.

A :class:`DetachedTurn` is consumed by a background task owned by :class:`TurnRunner`,
never by the HTTP request: a client that disconnects mid-stream does not lose the turn
(it completes and is persisted), approvals are answered by policy even when nobody
listens, and completion callbacks (idempotency records, A2A task states) always run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, TurnEvent
from beamclaw_core.sessions import SessionAddress, TurnFold, TurnResult
from beamclaw_tools import ContentPart

ApprovalMode = Literal["deny", "wait"]


@dataclass(frozen=True, slots=True)
class TurnRequest:
    address: SessionAddress
    content: str | tuple[ContentPart, ...]
    session_id: str | None = None
    approval_mode: ApprovalMode = "deny"
    source_message_id: str | None = None
    drafts: bool = True
    """The requester reads the answer as it streams; False (a non-streaming answer, a
    webhook, an A2A task) lets the turn's LLM calls be non-streaming requests when no
    one else watches the session (``Core.send``)."""


OnEvent = Callable[[TurnEvent], Awaitable[None]]
OnDone = Callable[[TurnResult], Awaitable[None]]


class DetachedTurn:
    """A running turn: its events as a queue, its result as a future."""

    def __init__(self, session_id: str, turn_id: str) -> None:
        self.session_id = session_id
        self.turn_id = turn_id
        self.events: asyncio.Queue[TurnEvent | None] = asyncio.Queue()
        """Every event of the turn, then ``None``. Reading is optional."""
        self.result: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()


class TurnRunner:
    """Starts turns through :class:`Core` and consumes them in owned background tasks."""

    def __init__(self, core: Callable[[], Core]) -> None:
        self._core = core
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def start(
        self,
        request: TurnRequest,
        *,
        on_event: OnEvent | None = None,
        on_done: OnDone | None = None,
    ) -> DetachedTurn:
        """Send the message and consume its turn in the background."""
        core = self._core()
        handle = await core.send(
            request.address,
            request.content,
            source_message_id=request.source_message_id,
            session_id=request.session_id,
            drafts=request.drafts,
        )
        turn = DetachedTurn(handle.session_id, handle.turn_id)

        async def pump() -> None:
            fold = TurnFold(turn.session_id, turn.turn_id)
            try:
                async for event in handle.events():
                    if isinstance(event, ApprovalRequested) and request.approval_mode == "deny":
                        await core.answer_approval(event.session_id, event.request_id, "no")
                    fold.feed(event)
                    turn.events.put_nowait(event)
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
            if not turn.result.done():
                turn.result.set_result(result)
            turn.events.put_nowait(None)
            if on_done is not None:
                try:
                    await on_done(result)
                except Exception:
                    logger.exception("turn {} completion callback failed", turn.turn_id)

        task = asyncio.create_task(pump(), name=f"turn-{turn.turn_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return turn

    async def drain(self, grace_seconds: float = 5.0) -> None:
        """Wait (bounded) for running consumers, then cancel what is left."""
        if self._tasks:
            _done, pending = await asyncio.wait(list(self._tasks), timeout=grace_seconds)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
