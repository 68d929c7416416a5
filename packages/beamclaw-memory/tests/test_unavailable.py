"""A database refusing a unit for a passing reason — full (SQLite at its page limit),
locked (PostgreSQL's ``lock_timeout`` under another session's lock) — raises
:class:`StorageUnavailableError` with its reason from ``Database.write``; nothing of the
unit is kept and the next unit works. The classification itself, and what it leaves
alone (a programming error stays SQLAlchemy's)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import OperationalError

from beamclaw_memory import Database, StorageUnavailableError, Unit
from beamclaw_memory.unavailable import unavailable_reason

notes = sa.Table(
    "unavailable_notes",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("body", sa.Text, nullable=False),
)


async def _made(url: str) -> Database:
    db = Database(url)
    await db.write(lambda u: notes.metadata.create_all(u.connection))
    return db


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = await _made(f"sqlite:///{tmp_path / 'full.db'}")
    yield db
    await db.dispose()


def _count(unit: Unit) -> int:
    return int(unit.execute(sa.select(sa.func.count()).select_from(notes)).scalar_one())


async def test_a_full_sqlite_database_is_storage_unavailable_and_recovers(
    sqlite_db: Database,
) -> None:
    await sqlite_db.write(lambda u: u.execute(notes.insert().values(body="kept")))

    def too_big(unit: Unit) -> None:
        pages = unit.execute(sa.text("PRAGMA page_count")).scalar_one()
        unit.execute(sa.text(f"PRAGMA max_page_count = {pages}"))
        unit.execute(notes.insert().values(body="x" * 1_000_000))

    with pytest.raises(StorageUnavailableError) as caught:
        await sqlite_db.write(too_big)
    assert caught.value.reason == "full"
    assert "disk is full" in str(caught.value) and "full" in caught.value.detail

    def roomy(unit: Unit) -> None:
        unit.execute(sa.text("PRAGMA max_page_count = 1073741823"))
        unit.execute(notes.insert().values(body="after"))

    await sqlite_db.write(roomy)
    assert await sqlite_db.read(_count) == 2, "the refused unit left nothing; the next one ran"


@pytest.mark.postgres
async def test_a_locked_postgres_table_is_storage_unavailable(postgres_url: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    db = await _made(postgres_url)
    holder = await asyncpg.connect(postgres_url)
    try:
        tx = holder.transaction()
        await tx.start()
        await holder.execute("LOCK TABLE unavailable_notes IN ACCESS EXCLUSIVE MODE")

        def blocked(unit: Unit) -> None:
            unit.execute(sa.text("SET LOCAL lock_timeout = '200ms'"))
            unit.execute(notes.insert().values(body="waits"))

        with pytest.raises(StorageUnavailableError) as caught:
            await db.write(blocked)
        assert caught.value.reason == "busy" and "busy" in str(caught.value)
        await tx.rollback()
        await db.write(lambda u: u.execute(notes.insert().values(body="after")))
        assert await db.read(_count) == 1
    finally:
        await holder.close()
        await db.dispose()


class _DriverError(Exception):
    def __init__(self, text: str, sqlstate: str | None = None) -> None:
        super().__init__(text)
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("text", "sqlstate", "reason"),
    [
        ("database is locked", None, "busy"),
        ("database table is locked: notes", None, "busy"),
        ("database or disk is full", None, "full"),
        ("disk I/O error", None, "io"),
        ("could not extend file: No space left on device", "53100", "full"),
        ("canceling statement due to lock timeout", "55P03", "busy"),
        ("no such table: notes", None, None),
        ("duplicate key value violates unique constraint", "23505", None),
    ],
)
def test_what_counts_as_unavailable(text: str, sqlstate: str | None, reason: str | None) -> None:
    wrapped = OperationalError("INSERT ...", {}, _DriverError(text, sqlstate))
    assert unavailable_reason(wrapped) == reason
