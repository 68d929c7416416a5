"""What the conversation store hands out: records, stored messages, queued runs, views.

Plain frozen values; nothing here touches the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from beamclaw_core.loop.states import State
from beamclaw_core.messages import Message

MESSAGE = "message"
SUMMARY = "summary"
RESET = "reset"


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    id: str
    agent_id: str
    user_id: str
    channel: str | None
    parent_id: str | None
    state: State
    last_activity_at: float
    created_at: float
    updated_at: float
    new: bool = False
    """True when the call that returned this record created the conversation."""


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One ``messages`` row: a message, or a marker (``summary``/``reset``) with ``data``."""

    seq: int
    kind: str
    message: Message | None
    data: dict[str, Any]
    created_at: float


@dataclass(frozen=True, slots=True)
class PendingRunRecord:
    id: str
    conversation_id: str
    position: int
    payload: dict[str, Any]
    created_at: float


@dataclass(frozen=True, slots=True)
class View:
    """What the LLM sees of a conversation: an optional summary, then raw messages."""

    summary: str | None
    messages: list[Message]
    first_seq: int
    """Sequence number of the first raw message in the view."""


@dataclass(frozen=True, slots=True)
class UsageRow:
    """The recorded usage of one stored message (an LLM call's answer)."""

    agent_id: str
    created_at: float
    usage: dict[str, Any]
    """``Usage`` as stored (``prompt_tokens``, ``completion_tokens``, ``total_tokens``...)."""
    cost_usd: float | None
