"""What ``beamclaw mcp serve``'s tools return: frozen pydantic models, serialised
straight into MCP structured content, made from the core's own values."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from beamclaw_core.conversation import HistoryEntry, PendingApprovalInfo
from beamclaw_core.messages import Message, Role
from beamclaw_core.sessions import SessionInfo

PREVIEW_CHARS = 160
"""How much of a conversation's last message its summary shows."""


def preview(text: str) -> str:
    """``text`` on one line, cut to :data:`PREVIEW_CHARS` (a summary's ``preview``)."""
    return " ".join(text.split())[:PREVIEW_CHARS]


def iso_time(epoch: float | None) -> str | None:
    """Epoch seconds as the ISO-8601 UTC timestamp the views carry (None stays None)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat() if epoch else None


def message_text(message: Message) -> str:
    """A message as one text: its words, then one line per tool call it makes."""
    calls = [
        f"[tool call {c.name} {json.dumps(c.args, sort_keys=True)}]" for c in message.tool_calls
    ]
    text = message.text
    return "\n".join([text, *calls] if text else calls)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ConversationSummary(_Frozen):
    """One conversation as listed."""

    id: str
    agent: str
    channel: str | None = None
    state: str = "idle"
    """The loop state (``idle``, ``awaiting_approval``, ``error`` …)."""
    updated_at: str | None = None
    """ISO-8601 timestamp of the last change."""
    message_count: int = 0
    preview: str = ""
    """The start of the last message."""

    @classmethod
    def of(cls, info: SessionInfo, count: int, last: Message | None) -> ConversationSummary:
        return cls(
            id=info.session_id,
            agent=info.agent_id,
            channel=info.channel,
            state=info.state,
            updated_at=iso_time(info.last_activity_at),
            message_count=count,
            preview=preview(message_text(last)) if last is not None else "",
        )


class MessageView(_Frozen):
    """One message of a conversation, as an MCP client reads it."""

    sequence: int
    role: str
    """``user`` | ``assistant`` | ``tool`` | ``system``."""
    content: str
    created_at: str | None = None
    tool_name: str | None = None

    @classmethod
    def of(cls, entry: HistoryEntry) -> MessageView:
        message = entry.message
        return cls(
            sequence=entry.seq,
            role=message.role.value,
            content=message_text(message),
            created_at=iso_time(entry.created_at),
            tool_name=message.name if message.role is Role.TOOL else None,
        )


class SendResult(_Frozen):
    """The outcome of sending a message and waiting for the agent's whole turn."""

    conversation_id: str
    answer: str
    state: str = "idle"
    """``idle`` when the turn finished; ``awaiting_approval`` when it stopped for one."""
    pending_approvals: list[str] = Field(default_factory=list)


class PendingApproval(_Frozen):
    """A tool call waiting for a human decision."""

    id: str
    conversation_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requested_at: str | None = None
    reason: str = ""

    @classmethod
    def of(cls, info: PendingApprovalInfo) -> PendingApproval:
        return cls(
            id=info.request_id,
            conversation_id=info.session_id,
            tool=info.tool,
            arguments=info.args,
            reason=f"agent {info.agent_id} wants to run {info.tool}",
        )


class ApprovalOutcome(_Frozen):
    """What answering an approval did."""

    id: str
    approved: bool
    conversation_id: str
    state: str = "idle"


class ConversationList(BaseModel):
    conversations: list[ConversationSummary]


class MessageList(BaseModel):
    conversation_id: str
    messages: list[MessageView]


class ApprovalList(BaseModel):
    approvals: list[PendingApproval]
