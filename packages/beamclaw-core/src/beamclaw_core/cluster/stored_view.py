"""What a node that does not run a session says of it: the owner's stored state.

The owner writes a session's loop state with every transition (fenced by its epoch,
:mod:`beamclaw_core.store.fencing`), a waiting-for-approval state included, so the shared
database answers for the sessions other nodes run: their pending approval and their state.
Pure: records in, descriptions out.
"""

from __future__ import annotations

from beamclaw_core.conversation.port import PendingApprovalInfo
from beamclaw_core.loop.states import AwaitingApproval, Error
from beamclaw_core.sessions.control import SessionInfo
from beamclaw_core.store import ConversationRecord


def stored_approval(record: ConversationRecord) -> PendingApprovalInfo | None:
    """The approval the stored turn of ``record`` waits for (None: it waits for none)."""
    state = record.state
    if not isinstance(state, AwaitingApproval):
        return None
    return PendingApprovalInfo(
        record.id, state.request_id, record.agent_id, state.pending.name, dict(state.pending.args)
    )


def stored_info(record: ConversationRecord, queued: int, subscribers: int) -> SessionInfo:
    """``record`` as its owner last stored it, with ``queued`` runs stored for it and
    ``subscribers`` on this node."""
    state = record.state
    return SessionInfo(
        record.id,
        record.agent_id,
        record.user_id,
        record.channel,
        state.kind,
        queued,
        record.last_activity_at,
        state.message if isinstance(state, Error) else None,
        record.parent_id,
        subscribers,
    )
