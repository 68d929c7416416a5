"""The row store's signature: every write path moves it, in the transaction that changes
the rows, and reading it costs one primary-key lookup however many rows are stored
(issue 18: a search before every turn must cost the same at row 100 and row 100,000)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from sqlalchemy.dialects import sqlite as sqlite_dialect

from beamclaw_memory import Database, MemoryCategory
from beamclaw_memory.backends import InMemoryRowStore, MemoryRow, SqlRowStore
from beamclaw_memory.backends import sql as sql_rows
from beamclaw_memory.backends.live_index import LiveIndexes
from beamclaw_memory.backends.rows import RowStore, SourceState
from beamclaw_memory.indexing.sources import content_hash
from beamclaw_memory.search.tokenizer import Tokenizer


def _row(key: str, text: str, source: str | None = None) -> MemoryRow:
    return MemoryRow(key, text, MemoryCategory.CORE, content_hash(text), 1.0, 1.0, source)


def _rows(backend_db: tuple[str, Database | None]) -> RowStore:
    _kind, db = backend_db
    return InMemoryRowStore() if db is None else SqlRowStore(db)


async def test_every_write_path_moves_the_signature(
    backend_db: tuple[str, Database | None],
) -> None:
    rows = _rows(backend_db)
    assert await rows.signature("a") == (0, 0)
    await rows.upsert("a", [_row("k1", "one"), _row("@f#1", "chunk", "file:f.md")])
    assert await rows.signature("a") == (1, 0)
    await rows.set_embeddings("a", [("k1", np.ones(4, dtype=np.float32), "m")])
    assert await rows.signature("a") == (2, 0)
    assert await rows.delete("a", ["missing"]) == 0
    assert await rows.signature("a") == (2, 0)  # nothing deleted: nothing moved
    assert await rows.delete("a", ["k1"]) == 1
    assert await rows.signature("a") == (2, 1)
    await rows.put_source("a", SourceState("file:f.md", "h", 1, 1, 1.0))
    await rows.delete_source("a", "file:f.md")
    assert await rows.signature("a") == (2, 2)
    assert await rows.signature("b") == (0, 0)  # per agent


async def test_a_delete_by_another_process_leaves_the_next_search(
    backend_db: tuple[str, Database | None],
) -> None:
    _kind, db = backend_db
    shared = InMemoryRowStore()
    ours = LiveIndexes(shared if db is None else SqlRowStore(db), Tokenizer(), None)
    theirs = LiveIndexes(shared if db is None else SqlRowStore(db), Tokenizer(), None)
    await ours.write("a", [_row("tea", "likes green tea"), _row("jazz", "likes jazz")])
    await ours.synced("a")
    await theirs.write("a", [_row("rain", "dislikes rain")])
    await ours.synced("a")  # an incremental sync: a write, no delete
    assert await theirs.delete("a", ["tea"]) == 1  # the person said "forget it" elsewhere
    index = await ours.synced("a")
    assert {index.doc(s).key for s in index.slots()} == {"jazz", "rain"}


async def test_the_signature_is_one_primary_key_read(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    db = Database(f"sqlite:///{path}")
    try:
        await db.migrate()
    finally:
        await db.dispose()
    plan = sql_rows._SIGNATURE.driver_plan(sqlite_dialect.dialect())  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
    with sqlite3.connect(path) as conn:
        steps = conn.execute("EXPLAIN QUERY PLAN " + plan.sql, plan.values({"b_agent": "a"}))
        detail = " / ".join(str(row[-1]) for row in steps)
    assert "memory_generations" in detail and "memory_entries" not in detail, detail
    assert "SEARCH" in detail and "SCAN" not in detail, detail
