"""The SQL row store: ``memory_entries`` and ``memory_sources`` on SQLite or PostgreSQL.

Uses the process's shared :class:`~beamclaw_memory.Database`; the tables come from the
``memory`` migration branch. Embeddings are stored with their rows as little-endian
float32 bytes plus the model name. Several processes may share one PostgreSQL database:
each keeps its own search index and refreshes it from ``signature``/``versions``. Every
write path bumps the agent's ``memory_generations`` counters in its own transaction.

numpy (through :mod:`beamclaw_memory.search.vectors`) is imported by the first row
that carries an embedding, read or written: rows without vectors never load it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from beamclaw_memory.backends.rows import ChangeClock, MemoryRow, Signature, SourceState, Upserted
from beamclaw_memory.dialect import dialect_insert
from beamclaw_memory.prepared import Prepared
from beamclaw_memory.service import MemoryCategory
from beamclaw_memory.storage import Database
from beamclaw_memory.tables import memory_entries as t
from beamclaw_memory.tables import memory_generations as g
from beamclaw_memory.tables import memory_sources as s
from beamclaw_memory.unit import Unit

if TYPE_CHECKING:
    import numpy as np

_BATCH = 500
_SIGNATURE = Prepared(  # before every search: inline, no thread hop; one primary-key read
    sa.select(g.c.writes, g.c.deletes).where(g.c.agent_id == sa.bindparam("b_agent"))
)
_VERSIONS = Prepared(  # ix_memory_entries_agent_changed; changed_at is never negative
    sa.select(t.c.key, t.c.changed_at).where(
        t.c.agent_id == sa.bindparam("b_agent"), t.c.changed_at > sa.bindparam("b_after")
    )
)
_ROW_COLUMNS = (
    t.c.key,
    t.c.value,
    t.c.category,
    t.c.source,
    t.c.content_hash,
    t.c.created_at,
    t.c.updated_at,
    t.c.embedding,
    t.c.embedding_model,
    t.c.changed_at,
    t.c.line_start,
    t.c.line_end,
)


def _vector(blob: bytes) -> np.ndarray:
    from beamclaw_memory.search.vectors import from_bytes  # numpy: with the first vector

    return from_bytes(blob)


def _blob(vector: np.ndarray) -> bytes:
    from beamclaw_memory.search.vectors import to_bytes  # numpy: with the first vector

    return to_bytes(vector)


def _row(record: Any) -> MemoryRow:
    blob = record.embedding
    return MemoryRow(
        key=record.key,
        value=record.value,
        category=MemoryCategory(record.category),
        source=record.source,
        content_hash=record.content_hash,
        created_at=record.created_at,
        updated_at=record.updated_at,
        embedding=_vector(blob) if blob is not None else None,
        embedding_model=record.embedding_model if blob is not None else None,
        changed_at=record.changed_at,
        lines=(
            (int(record.line_start), int(record.line_end))
            if record.line_start is not None and record.line_end is not None
            else None
        ),
    )


_HASHES_FOR_SOURCES = sa.select(t.c.key, t.c.content_hash).where(
    t.c.agent_id == sa.bindparam("agent_id"),
    t.c.source.in_(sa.bindparam("sources", expanding=True)),
    t.c.key.startswith("@"),
)


def _hashes_for_sources(unit: Unit, *, agent_id: str, sources: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(sources), _BATCH):
        params = {"agent_id": agent_id, "sources": sources[start : start + _BATCH]}
        found.update({str(row[0]): row[1] for row in unit.execute(_HASHES_FOR_SOURCES, params)})
    return found


_HASHES_FOR_KEYS = sa.select(t.c.key, t.c.content_hash).where(
    t.c.agent_id == sa.bindparam("agent_id"),
    t.c.key.in_(sa.bindparam("keys", expanding=True)),
)


def _hashes_for_keys(unit: Unit, *, agent_id: str, keys: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(keys), _BATCH):
        params = {"agent_id": agent_id, "keys": keys[start : start + _BATCH]}
        found.update({str(row[0]): row[1] for row in unit.execute(_HASHES_FOR_KEYS, params)})
    return found


@cache
def _upsert_entries(dialect: str) -> Any:
    """INSERT of ``memory_entries`` rows that updates a row whose key exists (built once
    per dialect: building it costs more than running it)."""
    ins = dialect_insert(dialect, t)
    return ins.on_conflict_do_update(
        index_elements=["agent_id", "key"],
        set_={
            c: ins.excluded[c]
            for c in (
                "value",
                "category",
                "source",
                "content_hash",
                "embedding",
                "embedding_model",
                "updated_at",
                "changed_at",
                "line_start",
                "line_end",
            )
        },
    )


@cache
def _bump(dialect: str, column: str) -> Any:
    """Add one to the agent's ``column`` counter (``writes`` or ``deletes``), creating its
    row at first, returning both counters as they are then (built once per dialect and
    column)."""
    ins = dialect_insert(dialect, g).values(
        agent_id=sa.bindparam("b_agent"),
        writes=1 if column == "writes" else 0,
        deletes=1 if column == "deletes" else 0,
    )
    return ins.on_conflict_do_update(
        index_elements=["agent_id"], set_={column: g.c[column] + 1}
    ).returning(g.c.writes, g.c.deletes)


class SqlRowStore:
    """Rows in the shared database (``[memory] backend = "sql"``)."""

    def __init__(self, database: Database, clock: ChangeClock | None = None) -> None:
        self._db = database
        self._clock = clock or ChangeClock()

    async def upsert(self, agent_id: str, rows: Sequence[MemoryRow]) -> Upserted:
        if not rows:
            raise ValueError("an upsert needs at least one row")
        values: list[dict[str, Any]] = [
            {
                "agent_id": agent_id,
                "key": r.key,
                "value": r.value,
                "category": str(r.category),
                "source": r.source,
                "content_hash": r.content_hash,
                "embedding": _blob(r.embedding) if r.embedding is not None else None,
                "embedding_model": r.embedding_model if r.embedding is not None else None,
                "created_at": r.created_at,
                "updated_at": r.updated_at,
                "changed_at": self._clock.next(),
                "line_start": r.lines[0] if r.lines is not None else None,
                "line_end": r.lines[1] if r.lines is not None else None,
            }
            for r in rows
        ]
        stmt = _upsert_entries(self._db.dialect)
        bump = _bump(self._db.dialect, "writes")

        def work(unit: Unit) -> Signature:
            for start in range(0, len(values), _BATCH):
                unit.execute(stmt, values[start : start + _BATCH])
            writes, deletes = unit.execute(bump, {"b_agent": agent_id}).one()
            return (int(writes), int(deletes))

        signature = await self._db.write(work)
        return Upserted({str(v["key"]): float(v["changed_at"]) for v in values}, signature)

    async def get(self, agent_id: str, key: str) -> MemoryRow | None:
        rows = await self.fetch(agent_id, [key])
        return rows[0] if rows else None

    async def fetch(self, agent_id: str, keys: Sequence[str]) -> list[MemoryRow]:
        def work(unit: Unit) -> list[MemoryRow]:
            out: list[MemoryRow] = []
            for start in range(0, len(keys), _BATCH):
                part = list(keys[start : start + _BATCH])
                result = unit.execute(
                    sa.select(*_ROW_COLUMNS).where(t.c.agent_id == agent_id, t.c.key.in_(part))
                )
                out.extend(_row(r) for r in result)
            return out

        return await self._db.read(work)

    async def delete(self, agent_id: str, keys: Sequence[str]) -> int:
        bump = _bump(self._db.dialect, "deletes")

        def work(unit: Unit) -> int:
            count = 0
            for start in range(0, len(keys), _BATCH):
                part = list(keys[start : start + _BATCH])
                result = unit.execute(
                    sa.delete(t).where(t.c.agent_id == agent_id, t.c.key.in_(part))
                )
                count += int(result.rowcount or 0)
            if count:
                unit.execute(bump, {"b_agent": agent_id})
            return count

        return await self._db.write(work)

    async def set_embeddings(
        self, agent_id: str, items: Sequence[tuple[str, np.ndarray, str]]
    ) -> dict[str, float]:
        if not items:
            return {}
        stmt = (
            sa.update(t)
            .where(t.c.agent_id == sa.bindparam("b_agent"), t.c.key == sa.bindparam("b_key"))
            .values(
                embedding=sa.bindparam("b_vec"),
                embedding_model=sa.bindparam("b_model"),
                changed_at=sa.bindparam("b_changed"),
            )
        )
        params: list[dict[str, Any]] = [
            {
                "b_agent": agent_id,
                "b_key": key,
                "b_vec": _blob(vector),
                "b_model": model,
                "b_changed": self._clock.next(),
            }
            for key, vector, model in items
        ]

        bump = _bump(self._db.dialect, "writes")

        def work(unit: Unit) -> None:
            for start in range(0, len(params), _BATCH):
                unit.execute(stmt, params[start : start + _BATCH])
            unit.execute(bump, {"b_agent": agent_id})

        await self._db.write(work)
        return {str(p["b_key"]): float(p["b_changed"]) for p in params}

    async def signature(self, agent_id: str) -> Signature:
        found = await self._db.read(lambda unit: unit.rows(_SIGNATURE, {"b_agent": agent_id}))
        return (int(found[0][0]), int(found[0][1])) if found else (0, 0)

    async def versions(self, agent_id: str, after: float | None = None) -> dict[str, float]:
        params = {"b_agent": agent_id, "b_after": -1.0 if after is None else after}
        return await self._db.read(
            lambda unit: {str(key): changed for key, changed in unit.rows(_VERSIONS, params)}
        )

    async def hashes_for_sources(self, agent_id: str, sources: Sequence[str]) -> dict[str, str]:
        if not sources:
            return {}
        work = partial(_hashes_for_sources, agent_id=agent_id, sources=list(sources))
        return await self._db.read(work)

    async def hashes_for_keys(self, agent_id: str, keys: Sequence[str]) -> dict[str, str]:
        if not keys:
            return {}
        return await self._db.read(partial(_hashes_for_keys, agent_id=agent_id, keys=list(keys)))

    async def recent(
        self, agent_id: str, limit: int, category: MemoryCategory | None
    ) -> list[MemoryRow]:
        stmt = sa.select(*_ROW_COLUMNS).where(t.c.agent_id == agent_id)
        if category is not None:
            stmt = stmt.where(t.c.category == str(category))
        stmt = stmt.order_by(t.c.updated_at.desc(), t.c.key).limit(limit)
        return await self._db.read(lambda unit: [_row(r) for r in unit.execute(stmt)])

    async def source_states(self, agent_id: str, prefix: str) -> dict[str, SourceState]:
        query = sa.select(s).where(s.c.agent_id == agent_id, s.c.source.startswith(prefix))

        def work(unit: Unit) -> dict[str, SourceState]:
            return {
                r.source: SourceState(
                    source=r.source,
                    content_hash=r.content_hash,
                    size=int(r.size),
                    mtime_ns=int(r.mtime_ns),
                    indexed_at=r.indexed_at,
                )
                for r in unit.execute(query)
            }

        return await self._db.read(work)

    async def put_source(self, agent_id: str, state: SourceState) -> None:
        values = {
            "agent_id": agent_id,
            "source": state.source,
            "content_hash": state.content_hash,
            "size": state.size,
            "mtime_ns": state.mtime_ns,
            "indexed_at": state.indexed_at,
        }
        ins = dialect_insert(self._db.dialect, s)
        stmt = ins.on_conflict_do_update(
            index_elements=["agent_id", "source"],
            set_={c: ins.excluded[c] for c in ("content_hash", "size", "mtime_ns", "indexed_at")},
        )
        await self._db.write(lambda unit: unit.execute(stmt, values))

    async def delete_source(self, agent_id: str, source: str) -> None:
        bump = _bump(self._db.dialect, "deletes")

        def work(unit: Unit) -> None:
            removed = unit.execute(
                sa.delete(t).where(
                    t.c.agent_id == agent_id, t.c.source == source, t.c.key.startswith("@")
                )
            )
            unit.execute(sa.delete(s).where(s.c.agent_id == agent_id, s.c.source == source))
            if removed.rowcount:
                unit.execute(bump, {"b_agent": agent_id})

        await self._db.write(work)

    async def aclose(self) -> None:
        return None
