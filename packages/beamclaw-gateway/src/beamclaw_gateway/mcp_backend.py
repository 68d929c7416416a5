"""BeamClaw's conversations as an MCP server's backend (``beamclaw mcp serve``).

:class:`CoreConversationBackend` implements :class:`beamclaw_mcp.serve.ConversationBackend`
over a running :class:`~beamclaw_core.api.Core`, so MCP clients drive the same sessions,
loop and approvals as every other channel:

* ``send_message_and_wait`` sends on the ``mcp`` channel and follows the turn's events
  until it ends — or until it stops for an approval, which is then pending: listed by
  ``list_pending_approvals`` and answered by ``respond_to_approval`` (from the same client
  or another one, while the turn waits);
* ``respond_to_approval`` answers it and follows the turn again until it ends or stops
  for the next approval (bounded by ``follow_seconds``), so the answer is readable at once.

Error contract (see the port): unknown ids raise ``LookupError``, unusable input
``ValueError``, no answer in time ``TimeoutError``.
"""

from __future__ import annotations

import asyncio
import json
import uuid

from beamclaw_core.api import Core
from beamclaw_core.messages import Message, Role
from beamclaw_core.sessions import SessionAddress, Subscription, TurnFold, TurnResult, TurnStatus
from beamclaw_core.store import ConversationRecord
from beamclaw_mcp.serve import (
    ApprovalOutcome,
    ConversationSummary,
    MessageView,
    PendingApproval,
    SendResult,
    iso_time,
    no_answer_in_time,
    preview,
)

MCP_CHANNEL = "mcp"


def _content(message: Message) -> str:
    text = message.text
    calls = [
        f"[tool call {c.name} {json.dumps(c.args, sort_keys=True)}]" for c in message.tool_calls
    ]
    return "\n".join([text, *calls] if text else calls)


_STATES: dict[TurnStatus, str] = {
    "completed": "idle",
    "failed": "error",
    "cancelled": "cancelled",
    "dropped": "dropped",
}
"""A turn's result as the conversation state ``mcp serve`` reports."""


def _state(result: TurnResult) -> SendResult:
    return SendResult(
        conversation_id=result.session_id, answer=result.message, state=_STATES[result.status]
    )


class CoreConversationBackend:
    """The MCP server's view of a :class:`Core` (see the module docstring)."""

    def __init__(
        self,
        core: Core,
        *,
        default_agent: str,
        user_id: str = "mcp:client",
        follow_seconds: float = 60.0,
    ) -> None:
        self.core = core
        self.default_agent = default_agent
        self.user_id = user_id
        self.follow_seconds = follow_seconds

    # ------------------------------------------------------------ conversations

    async def list_conversations(
        self, *, agent: str | None = None, limit: int = 20
    ) -> list[ConversationSummary]:
        sessions = [
            s
            for s in await self.core.list_sessions()
            if s.parent_id is None and (agent is None or s.agent_id == agent)
        ]
        sessions.sort(key=lambda s: s.last_activity_at, reverse=True)
        out: list[ConversationSummary] = []
        for info in sessions[:limit]:
            history = await self.core.history(info.session_id)
            last = preview(_content(history[-1])) if history else ""
            out.append(
                ConversationSummary(
                    id=info.session_id,
                    agent=info.agent_id,
                    channel=info.channel,
                    state=info.state,
                    updated_at=iso_time(info.last_activity_at),
                    message_count=len(history),
                    preview=last,
                )
            )
        return out

    async def read_messages(
        self, conversation_id: str, *, limit: int = 50, before_sequence: int | None = None
    ) -> list[MessageView]:
        await self._record(conversation_id)
        rows = [
            r
            for r in await self.core.store.messages(conversation_id)
            if r.message is not None and (before_sequence is None or r.seq < before_sequence)
        ]
        return [
            MessageView(
                sequence=r.seq,
                role=r.message.role.value,
                content=_content(r.message),
                created_at=iso_time(r.created_at),
                tool_name=r.message.name if r.message.role is Role.TOOL else None,
            )
            for r in rows[-limit:]
            if r.message is not None
        ]

    async def send_message_and_wait(
        self,
        conversation_id: str | None,
        text: str,
        *,
        agent: str | None = None,
        wait_seconds: float = 300.0,
    ) -> SendResult:
        if conversation_id is not None:
            record = await self._record(conversation_id)
            if agent is not None and agent != record.agent_id:
                raise ValueError(
                    f"conversation {conversation_id} belongs to agent {record.agent_id!r}, "
                    f"not {agent!r}"
                )
            address = SessionAddress(record.user_id, record.agent_id, record.channel or MCP_CHANNEL)
            session_id = conversation_id
        else:
            address = SessionAddress(self.user_id, agent or self.default_agent, MCP_CHANNEL)
            session_id = f"session-{uuid.uuid4().hex}"
        handle = await self.core.send(address, text, session_id=session_id)
        fold = TurnFold(handle.session_id, handle.turn_id)
        try:
            async with asyncio.timeout(wait_seconds):
                async for event in handle.events():
                    result = fold.feed(event)
                    if result is not None:
                        return _state(result)
                    if fold.awaiting is not None:
                        return SendResult(
                            conversation_id=session_id,
                            answer=fold.draft,
                            state="awaiting_approval",
                            pending_approvals=[
                                a.request_id for a in await self.core.pending_approvals(session_id)
                            ]
                            or [fold.awaiting.request_id],
                        )
                # the subscription lagged: the terminal event is still on the handle
                return _state(fold.end(await handle.result()))
        except TimeoutError:
            raise no_answer_in_time(wait_seconds, session_id) from None

    # ------------------------------------------------------------ approvals

    async def list_pending_approvals(
        self, conversation_id: str | None = None
    ) -> list[PendingApproval]:
        if conversation_id is not None:
            await self._record(conversation_id)
        return [
            PendingApproval(
                id=a.request_id,
                conversation_id=a.session_id,
                tool=a.tool,
                arguments=a.args,
                reason=f"agent {a.agent_id} wants to run {a.tool}",
            )
            for a in await self.core.pending_approvals(conversation_id)
        ]

    async def respond_to_approval(
        self, approval_id: str, *, approve: bool, reason: str | None = None
    ) -> ApprovalOutcome:
        pending = next(
            (a for a in await self.core.pending_approvals() if a.request_id == approval_id), None
        )
        if pending is None:
            raise LookupError(f"no pending approval {approval_id!r} (answered or expired?)")
        events = await self.core.subscribe(pending.session_id)
        try:
            answered = await self.core.answer_approval(
                pending.session_id, approval_id, "yes" if approve else "no"
            )
            if not answered:
                raise ValueError(f"approval {approval_id!r} is no longer pending")
            state = await self._follow(events)
        finally:
            events.close()
        return ApprovalOutcome(
            id=approval_id, approved=approve, conversation_id=pending.session_id, state=state
        )

    # ------------------------------------------------------------ helpers

    async def _follow(self, events: Subscription) -> str:
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

    async def _record(self, conversation_id: str) -> ConversationRecord:
        record = await self.core.store.get(conversation_id)
        if record is None:
            raise LookupError(f"no conversation {conversation_id!r}")
        return record
