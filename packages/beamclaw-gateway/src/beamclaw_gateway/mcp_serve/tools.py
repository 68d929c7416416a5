"""The five tools of ``beamclaw mcp serve``, over the :class:`Conversation` port.

One implementation serves both modes: embedded (a
:class:`~beamclaw_core.conversation.LocalConversation` in this process) and attached to a
running gateway (the CLI's remote conversation over its API). MCP clients drive the
very sessions, loop and approvals every other front end does:

* ``send_message_and_wait`` sends on the ``mcp`` channel and follows the turn until it
  ends — or stops for an approval, which is then pending: listed, and answered from this
  client or any other front end while the turn waits;
* ``respond_to_approval`` subscribes to the session *before* answering (nothing is
  missed), answers, and follows the turn until it ends or asks again (``follow_seconds``).

Error contract (what the server turns into tool errors): an unknown conversation or
approval raises ``LookupError``, unusable input ``ValueError``, no answer in time
``TimeoutError``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from typing import TypeVar

from beamclaw_core.conversation import Conversation, EventStream, TurnRequest
from beamclaw_core.sessions import (
    SessionAddress,
    SessionInfo,
    TurnFold,
    TurnResult,
    TurnStatus,
    UnknownSessionError,
)
from beamclaw_gateway.mcp_serve.views import (
    ApprovalOutcome,
    ConversationSummary,
    MessageView,
    PendingApproval,
    SendResult,
)

MCP_CHANNEL = "mcp"

_T = TypeVar("_T")

_STATES: dict[TurnStatus, str] = {
    "completed": "idle",
    "failed": "error",
    "cancelled": "cancelled",
    "dropped": "dropped",
}
"""A turn's result as the conversation state ``mcp serve`` reports."""


def no_answer_in_time(wait_seconds: float, conversation_id: str) -> TimeoutError:
    """What ``send_message_and_wait`` raises when the turn outlasts the wait."""
    return TimeoutError(
        f"no answer within {wait_seconds:g} s; the turn goes on in conversation "
        f"{conversation_id} (read_messages shows its answer later)"
    )


def _sent(result: TurnResult) -> SendResult:
    return SendResult(
        conversation_id=result.session_id, answer=result.message, state=_STATES[result.status]
    )


class ConversationTools:
    """What the MCP server's tools do (see the module docstring)."""

    def __init__(
        self,
        conversation: Conversation,
        *,
        default_agent: str,
        user_id: str = "mcp:client",
        follow_seconds: float = 60.0,
    ) -> None:
        self.conversation = conversation
        self.default_agent = default_agent
        self.user_id = user_id
        self.follow_seconds = follow_seconds

    async def list_conversations(
        self, *, agent: str | None = None, limit: int = 20
    ) -> list[ConversationSummary]:
        out: list[ConversationSummary] = []
        for info in (await self.conversation.sessions(agent=agent))[:limit]:
            page = await self.conversation.history(info.session_id, limit=1)
            last = page.entries[-1].message if page.entries else None
            out.append(ConversationSummary.of(info, page.total, last))
        return out

    async def read_messages(
        self, conversation_id: str, *, limit: int = 50, before_sequence: int | None = None
    ) -> list[MessageView]:
        page = await self._known(
            self.conversation.history(conversation_id, limit=limit, before_seq=before_sequence),
            conversation_id,
        )
        return [MessageView.of(e) for e in page.entries]

    async def send_message_and_wait(
        self,
        conversation_id: str | None,
        text: str,
        *,
        agent: str | None = None,
        wait_seconds: float = 300.0,
    ) -> SendResult:
        if conversation_id is not None:
            info = await self._info(conversation_id)
            if agent is not None and agent != info.agent_id:
                raise ValueError(
                    f"conversation {conversation_id} belongs to agent {info.agent_id!r}, "
                    f"not {agent!r}"
                )
            address = SessionAddress(info.user_id, info.agent_id, info.channel or MCP_CHANNEL)
            session_id = conversation_id
        else:
            address = SessionAddress(self.user_id, agent or self.default_agent, MCP_CHANNEL)
            session_id = f"session-{uuid.uuid4().hex}"
        try:
            async with asyncio.timeout(wait_seconds):
                turn = await self.conversation.send(
                    TurnRequest(address, text, session_id=session_id, approval_mode="wait")
                )
                fold = TurnFold(turn.session_id, turn.turn_id)
                async for event in turn.events():
                    result = fold.feed(event)
                    if result is not None:
                        return _sent(result)
                    if fold.awaiting is not None:
                        pending = await self.conversation.pending_approvals(session_id)
                        return SendResult(
                            conversation_id=session_id,
                            answer=fold.draft,
                            state="awaiting_approval",
                            pending_approvals=[a.request_id for a in pending]
                            or [fold.awaiting.request_id],
                        )
                return _sent(await turn.result())
        except TimeoutError:
            raise no_answer_in_time(wait_seconds, session_id) from None

    async def list_pending_approvals(
        self, conversation_id: str | None = None
    ) -> list[PendingApproval]:
        if conversation_id is not None:
            await self._info(conversation_id)
        return [
            PendingApproval.of(a)
            for a in await self.conversation.pending_approvals(conversation_id)
        ]

    async def respond_to_approval(
        self, approval_id: str, *, approve: bool, reason: str | None = None
    ) -> ApprovalOutcome:
        pending = next(
            (a for a in await self.conversation.pending_approvals() if a.request_id == approval_id),
            None,
        )
        if pending is None:
            raise LookupError(f"no pending approval {approval_id!r} (answered or expired?)")
        events = await self._known(
            self.conversation.subscribe(pending.session_id), pending.session_id
        )
        try:
            outcome = await self.conversation.answer(approval_id, "yes" if approve else "no")
            if outcome == "unknown":
                raise LookupError(f"no pending approval {approval_id!r} (answered or expired?)")
            if outcome == "already_answered":
                raise ValueError(f"approval {approval_id!r} is no longer pending")
            state = await self._follow(events)
        finally:
            events.close()
        return ApprovalOutcome(
            id=approval_id, approved=approve, conversation_id=pending.session_id, state=state
        )

    async def _follow(self, events: EventStream) -> str:
        """Follow the session until its turn ends or stops for another approval."""
        folds: dict[str, TurnFold] = {}
        try:
            async with asyncio.timeout(self.follow_seconds):
                async for event in events:
                    if event.turn_id is None:
                        continue
                    fold = folds.setdefault(
                        event.turn_id, TurnFold(event.session_id, event.turn_id)
                    )
                    result = fold.feed(event)
                    if result is not None:
                        return _STATES[result.status]
                    if fold.awaiting is not None:
                        return "awaiting_approval"
        except TimeoutError:
            return "running"
        return "running"

    async def _info(self, conversation_id: str) -> SessionInfo:
        return await self._known(self.conversation.info(conversation_id), conversation_id)

    @staticmethod
    async def _known(call: Awaitable[_T], conversation_id: str) -> _T:
        try:
            return await call
        except UnknownSessionError:
            raise LookupError(f"no conversation {conversation_id!r}") from None
