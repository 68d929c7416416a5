"""The ``pending_runs`` table: messages queued for a conversation while it is busy.

Functions of a :class:`~beamclaw_memory.Unit`. Queueing and dropping are prepared hot
statements (a message for a busy session is queued on its critical path).

Invariant: ``position`` grows by one per conversation; a run leaves the queue only by
being consumed (in the commit that starts its turn) or dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from beamclaw_core.store.records import PendingRunRecord
from beamclaw_core.store.tables import pending_runs
from beamclaw_memory import Prepared, Unit

_MAX_POSITION = Prepared(
    sa.select(sa.func.max(pending_runs.c.position)).where(
        pending_runs.c.conversation_id == sa.bindparam("b_id")
    )
)
_INSERT = Prepared(
    pending_runs.insert().values(
        id=sa.bindparam("b_id"),
        conversation_id=sa.bindparam("b_conversation"),
        position=sa.bindparam("b_position"),
        payload=sa.bindparam("b_payload"),
        created_at=sa.bindparam("b_now"),
    )
)
_DROP = Prepared(pending_runs.delete().where(pending_runs.c.id == sa.bindparam("b_id")))
_COLUMNS = (
    pending_runs.c.id,
    pending_runs.c.conversation_id,
    pending_runs.c.position,
    pending_runs.c.payload,
    pending_runs.c.created_at,
)
_ALL = Prepared(
    sa.select(*_COLUMNS).order_by(pending_runs.c.conversation_id, pending_runs.c.position)
)
_OF = Prepared(
    sa.select(*_COLUMNS)
    .where(pending_runs.c.conversation_id == sa.bindparam("b_id"))
    .order_by(pending_runs.c.position)
)


def enqueue(
    unit: Unit, conversation_id: str, run_id: str, payload: dict[str, Any], now: float
) -> int:
    """Queue a run last; its position."""
    ((last,),) = unit.rows(_MAX_POSITION, {"b_id": conversation_id})
    position = int(last or 0) + 1
    unit.run(
        _INSERT,
        {
            "b_id": run_id,
            "b_conversation": conversation_id,
            "b_position": position,
            "b_payload": payload,
            "b_now": now,
        },
    )
    return position


def drop(unit: Unit, run_ids: Sequence[str]) -> None:
    for run_id in run_ids:
        unit.run(_DROP, {"b_id": run_id})


def pending(unit: Unit, conversation_id: str | None) -> list[PendingRunRecord]:
    """Queued runs (of one conversation, or all) by conversation and position."""
    rows = unit.rows(_ALL) if conversation_id is None else unit.rows(_OF, {"b_id": conversation_id})
    return [PendingRunRecord(r[0], r[1], r[2], dict(r[3]), r[4]) for r in rows]
