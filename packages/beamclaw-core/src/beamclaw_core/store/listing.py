"""Questions over many conversations: listings, recovery, spend, retention candidates.

Functions of a :class:`~beamclaw_memory.Unit`. None is on a turn's hot path and each may
read many rows, so they are ordinary statements: the engine runs them as larger work
(on SQLite, on a database thread).
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

from beamclaw_core.store.conversation_rows import record
from beamclaw_core.store.records import MESSAGE, ConversationRecord, UsageRow
from beamclaw_core.store.tables import conversations, messages
from beamclaw_memory import Unit

QUIET_STATES = ("idle", "error")
"""States of a conversation not in a turn."""


def every(unit: Unit, *, include_children: bool) -> list[ConversationRecord]:
    """Conversations by last activity, newest first (top-level only unless asked)."""
    query = sa.select(conversations).order_by(conversations.c.last_activity_at.desc())
    if not include_children:
        query = query.where(conversations.c.parent_id.is_(None))
    return [record(tuple(r)) for r in unit.execute(query)]


def busy(unit: Unit) -> list[str]:
    """Conversations persisted mid-turn (neither idle nor error)."""
    query = sa.select(conversations.c.id).where(conversations.c.state.not_in(QUIET_STATES))
    return [r[0] for r in unit.execute(query)]


def cost_since(unit: Unit, agent_id: str, since: float) -> float:
    """USD spent by ``agent_id``'s conversations (children included) since ``since``."""
    query = (
        sa.select(sa.func.coalesce(sa.func.sum(messages.c.cost_usd), 0.0))
        .select_from(messages.join(conversations, messages.c.conversation_id == conversations.c.id))
        .where(conversations.c.agent_id == agent_id, messages.c.created_at >= since)
    )
    return float(unit.execute(query).scalar() or 0.0)


def message_counts(unit: Unit) -> dict[str, int]:
    """Stored messages (markers excluded) per conversation that has any."""
    query = (
        sa.select(messages.c.conversation_id, sa.func.count())
        .where(messages.c.kind == MESSAGE)
        .group_by(messages.c.conversation_id)
    )
    return {str(r[0]): int(r[1]) for r in unit.execute(query)}


def usage_since(unit: Unit, since: float) -> list[UsageRow]:
    """Every message with recorded usage since ``since`` (children included, under their
    own agent), oldest first."""
    query = (
        sa.select(
            conversations.c.agent_id,
            messages.c.created_at,
            messages.c.usage,
            messages.c.cost_usd,
        )
        .select_from(messages.join(conversations, messages.c.conversation_id == conversations.c.id))
        .where(messages.c.kind == MESSAGE, messages.c.created_at >= since)
        .order_by(messages.c.created_at)
    )
    # a message without usage holds JSON null (not SQL NULL): skipped here, not in SQL
    return [UsageRow(str(r[0]), float(r[1]), dict(r[2]), r[3]) for r in unit.execute(query) if r[2]]


def inactive(unit: Unit, before: float, *, keep: Collection[str]) -> list[str]:
    """Top-level conversations not in a turn and last active before ``before``, except
    ``keep``."""
    query = sa.select(conversations.c.id).where(
        conversations.c.last_activity_at < before,
        conversations.c.state.in_(QUIET_STATES),
        conversations.c.parent_id.is_(None),
    )
    return [r[0] for r in unit.execute(query) if r[0] not in keep]


SWEEP_LOCK_KEY = 0x6263737765657021
"""PostgreSQL advisory lock (transaction-scoped) of the history-retention sweep."""


def sweep_lock(unit: Unit) -> bool:
    """Take the retention sweep's lock for this transaction (always had on SQLite, whose
    one writer at a time is lock enough); False: another node holds it."""
    if unit.dialect != "postgresql":
        return True
    held = unit.execute(sa.text(f"SELECT pg_try_advisory_xact_lock({SWEEP_LOCK_KEY})"))
    return bool(held.scalar())
