"""Persistence of A2A tasks (``gateway_a2a_tasks``): the task JSON plus indexed columns."""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from beamclaw_gateway.tables import a2a_tasks
from beamclaw_memory import Database, Unit


class A2AStore:
    """Tasks by id; ``data`` is the A2A ``Task`` object as served."""

    def __init__(self, database: Database) -> None:
        self.db = database

    async def create(self, task: dict[str, Any], session_id: str) -> None:
        now = time.time()
        stmt = a2a_tasks.insert().values(
            id=task["id"],
            context_id=task["contextId"],
            session_id=session_id,
            turn_id=None,
            state=task["status"]["state"],
            data=task,
            created_at=now,
            updated_at=now,
        )
        await self.db.write(lambda unit: unit.execute(stmt))

    async def save(self, task: dict[str, Any], *, turn_id: str | None = None) -> None:
        values: dict[str, Any] = {
            "state": task["status"]["state"],
            "data": task,
            "updated_at": time.time(),
        }
        if turn_id is not None:
            values["turn_id"] = turn_id
        stmt = a2a_tasks.update().where(a2a_tasks.c.id == task["id"]).values(**values)
        await self.db.write(lambda unit: unit.execute(stmt))

    async def get(self, task_id: str) -> tuple[dict[str, Any], str] | None:
        """The task and its session id, or None."""
        query = sa.select(a2a_tasks.c.data, a2a_tasks.c.session_id).where(a2a_tasks.c.id == task_id)
        row = await self.db.read(lambda unit: unit.execute(query).first())
        return None if row is None else (dict(row[0]), str(row[1]))

    async def list(
        self,
        *,
        context_id: str | None = None,
        state: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of tasks, newest first, and the total count."""
        where: list[sa.ColumnElement[bool]] = []
        if context_id is not None:
            where.append(a2a_tasks.c.context_id == context_id)
        if state is not None:
            where.append(a2a_tasks.c.state == state)
        count = sa.select(sa.func.count()).select_from(a2a_tasks).where(*where)
        page = (
            sa.select(a2a_tasks.c.data)
            .where(*where)
            .order_by(a2a_tasks.c.updated_at.desc(), a2a_tasks.c.id)
            .limit(limit)
            .offset(offset)
        )

        def work(unit: Unit) -> tuple[list[dict[str, Any]], int]:
            total = unit.execute(count).scalar_one()
            return [dict(r[0]) for r in unit.execute(page)], int(total)

        return await self.db.read(work)
