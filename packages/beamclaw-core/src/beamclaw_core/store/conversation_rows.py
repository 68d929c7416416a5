"""The ``conversations`` table: create, read, state, activity, delete (units' steps).

Functions of a :class:`~beamclaw_memory.Unit`, each a step of the store's units of
work. The keyed ones (create, get, state, touch) are prepared hot statements, so the
units made of them run inline on SQLite; deleting a tree uses ``IN`` lists and runs as
larger work.

Invariant: deletion is explicit, children first — cascades are not relied upon (SQLite
may have foreign keys off on connections created outside ``Database``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from beamclaw_core.loop.states import Idle, State, state_from_json, state_to_json
from beamclaw_core.store.fencing import refuse_if_stale
from beamclaw_core.store.records import ConversationRecord
from beamclaw_core.store.tables import conversations, messages, pending_runs
from beamclaw_memory import Prepared, Unit
from beamclaw_memory.dialect import dialect_insert

_COLUMNS = tuple(c.name for c in conversations.columns)


def _create_statement(dialect: str) -> sa.Executable:
    """INSERT of a new conversation that does nothing when its id exists."""
    return (
        dialect_insert(dialect, conversations)
        .values(
            id=sa.bindparam("b_id"),
            agent_id=sa.bindparam("b_agent"),
            user_id=sa.bindparam("b_user"),
            channel=sa.bindparam("b_channel"),
            parent_id=sa.bindparam("b_parent"),
            state=sa.bindparam("b_state"),
            state_data=sa.bindparam("b_state_data"),
            last_activity_at=sa.bindparam("b_now"),
            state_updated_at=sa.bindparam("b_now"),
            created_at=sa.bindparam("b_now"),
            updated_at=sa.bindparam("b_now"),
        )
        .on_conflict_do_nothing(index_elements=["id"])
    )


_CREATE = Prepared(_create_statement)
_GET = Prepared(sa.select(conversations).where(conversations.c.id == sa.bindparam("b_id")))
_FENCED = sa.and_(
    conversations.c.id == sa.bindparam("b_id"),
    conversations.c.owner_epoch <= sa.bindparam("b_epoch"),
)
"""A fenced write's row: the conversation, unless it is owned under a newer epoch."""
_STATE_VALUES = {
    "owner_epoch": sa.bindparam("b_epoch"),
    "state": sa.bindparam("b_state"),
    "state_data": sa.bindparam("b_state_data"),
    "state_updated_at": sa.bindparam("b_now"),
    "updated_at": sa.bindparam("b_now"),
}
_SET_STATE = {
    activity: Prepared(
        conversations.update()
        .where(_FENCED)
        .values(
            **_STATE_VALUES, **({"last_activity_at": sa.bindparam("b_now")} if activity else {})
        )
    )
    for activity in (False, True)
}
_CHANGED = Prepared(
    conversations.update()
    .where(_FENCED)
    .values(updated_at=sa.bindparam("b_now"), owner_epoch=sa.bindparam("b_epoch"))
)
_ACTIVE = Prepared(
    conversations.update()
    .where(conversations.c.id == sa.bindparam("b_id"))
    .values(last_activity_at=sa.bindparam("b_now"))
)


def record(row: Sequence[Any]) -> ConversationRecord:
    """A ``conversations`` row (its columns in table order) as a record."""
    m = dict(zip(_COLUMNS, row, strict=True))
    return ConversationRecord(
        id=m["id"],
        agent_id=m["agent_id"],
        user_id=m["user_id"],
        channel=m["channel"],
        parent_id=m["parent_id"],
        state=state_from_json(m["state_data"]),
        last_activity_at=m["last_activity_at"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
    )


def ensure(
    unit: Unit,
    conversation_id: str,
    *,
    agent_id: str,
    user_id: str,
    channel: str | None,
    parent_id: str | None,
    now: float,
) -> ConversationRecord:
    """Insert the conversation ``Idle`` unless present (``new``); else what is there."""
    idle = Idle()
    params = {
        "b_id": conversation_id,
        "b_agent": agent_id,
        "b_user": user_id,
        "b_channel": channel,
        "b_parent": parent_id,
        "b_state": idle.kind,
        "b_state_data": state_to_json(idle),
        "b_now": now,
    }
    if unit.run(_CREATE, params) == 1:
        return ConversationRecord(
            conversation_id, agent_id, user_id, channel, parent_id, idle, now, now, now, new=True
        )
    found = get(unit, conversation_id)
    assert found is not None  # the insert found it there, and rows are only deleted by key
    return found


def get(unit: Unit, conversation_id: str) -> ConversationRecord | None:
    rows = unit.rows(_GET, {"b_id": conversation_id})
    return record(rows[0]) if rows else None


def set_state(
    unit: Unit, conversation_id: str, state: State, *, now: float, activity: bool, epoch: int = 0
) -> None:
    """Store ``state`` (and, with ``activity``, that the person was active at ``now``)
    under the owner's ``epoch``; :class:`~beamclaw_core.store.fencing.StaleOwnerError`
    when the conversation is owned under a newer one (nothing written)."""
    params = {
        "b_id": conversation_id,
        "b_state": state.kind,
        "b_state_data": state_to_json(state),
        "b_now": now,
        "b_epoch": epoch,
    }
    refuse_if_stale(unit, conversation_id, epoch, unit.run(_SET_STATE[activity], params))


def changed(unit: Unit, conversation_id: str, now: float, *, epoch: int = 0) -> None:
    """Mark the conversation changed (``updated_at``) without a new state, fenced like
    :func:`set_state`."""
    changed_rows = unit.run(_CHANGED, {"b_id": conversation_id, "b_now": now, "b_epoch": epoch})
    refuse_if_stale(unit, conversation_id, epoch, changed_rows)


def touch(unit: Unit, conversation_id: str, now: float) -> None:
    """Record activity at ``now`` (``last_activity_at``)."""
    unit.run(_ACTIVE, {"b_id": conversation_id, "b_now": now})


def delete_trees(unit: Unit, ids: Sequence[str]) -> tuple[int, list[str]]:
    """Delete conversations with their messages, runs and children, children first.

    Returns how many of ``ids`` existed, and every id deleted with its descendants."""
    deleted = list(ids)
    _delete_below(unit, ids, deleted)
    existed = unit.execute(conversations.delete().where(conversations.c.id.in_(ids))).rowcount
    return int(existed), deleted


def _delete_below(unit: Unit, ids: Sequence[str], deleted: list[str]) -> None:
    unit.execute(messages.delete().where(messages.c.conversation_id.in_(ids)))
    unit.execute(pending_runs.delete().where(pending_runs.c.conversation_id.in_(ids)))
    children = [
        r[0]
        for r in unit.execute(
            sa.select(conversations.c.id).where(conversations.c.parent_id.in_(ids))
        )
    ]
    if children:
        deleted.extend(children)
        _delete_below(unit, children, deleted)
        unit.execute(conversations.delete().where(conversations.c.id.in_(children)))
