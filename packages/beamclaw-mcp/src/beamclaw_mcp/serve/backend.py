"""The port ``beamclaw mcp serve`` drives: conversations and approvals.

:class:`ConversationBackend` is what the core conversation API must provide for BeamClaw
to act as an MCP server; the composition root binds it to the real sessions. Values are
frozen pydantic models so they serialise straight into MCP structured content.

Error contract for implementations: raise ``LookupError`` for an unknown conversation or
approval id, ``ValueError`` for input that cannot be acted on (e.g. an approval already
answered), ``TimeoutError`` when no answer came within the wait. Each becomes a tool error
with that message; any other exception becomes a generic "internal error" tool result
(its details are logged, never sent to the client).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

PREVIEW_CHARS = 160
"""How much of a conversation's last message its summary shows."""


def preview(text: str) -> str:
    """``text`` on one line, cut to :data:`PREVIEW_CHARS` (a summary's ``preview``)."""
    return " ".join(text.split())[:PREVIEW_CHARS]


def iso_time(epoch: float | None) -> str | None:
    """Epoch seconds as the ISO-8601 UTC timestamp the views carry (None stays None)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat() if epoch else None


def no_answer_in_time(wait_seconds: float, conversation_id: str) -> TimeoutError:
    """What ``send_message_and_wait`` raises when the turn outlasts the wait."""
    return TimeoutError(
        f"no answer within {wait_seconds:g} s; the turn goes on in conversation "
        f"{conversation_id} (read_messages shows its answer later)"
    )


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


class MessageView(_Frozen):
    """One message of a conversation, as an MCP client reads it."""

    sequence: int
    role: str
    """``user`` | ``assistant`` | ``tool`` | ``system``."""
    content: str
    created_at: str | None = None
    tool_name: str | None = None


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


class ApprovalOutcome(_Frozen):
    """What answering an approval did."""

    id: str
    approved: bool
    conversation_id: str
    state: str = "idle"


@runtime_checkable
class ConversationBackend(Protocol):
    """Conversations and approvals, as exposed to MCP clients (see the module docstring)."""

    async def list_conversations(
        self, *, agent: str | None = None, limit: int = 20
    ) -> list[ConversationSummary]:
        """Most recently updated first."""
        ...

    async def read_messages(
        self, conversation_id: str, *, limit: int = 50, before_sequence: int | None = None
    ) -> list[MessageView]:
        """The last ``limit`` messages (before ``before_sequence`` when given), oldest first."""
        ...

    async def send_message_and_wait(
        self,
        conversation_id: str | None,
        text: str,
        *,
        agent: str | None = None,
        wait_seconds: float = 300.0,
    ) -> SendResult:
        """Send ``text`` (a new conversation when ``conversation_id`` is None) and wait for
        the turn to finish or stop for an approval."""
        ...

    async def list_pending_approvals(
        self, conversation_id: str | None = None
    ) -> list[PendingApproval]:
        """Approvals waiting for a decision (of one conversation, or all)."""
        ...

    async def respond_to_approval(
        self, approval_id: str, *, approve: bool, reason: str | None = None
    ) -> ApprovalOutcome:
        """Approve or deny; the conversation continues."""
        ...
