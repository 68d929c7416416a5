"""The shared database: URL resolution, SQLite WAL, migrations on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import gc
import socket
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from beamclaw_memory import (
    Database,
    DatabaseUnavailableError,
    MigrationError,
    expected_heads,
    masked,
    normalise_url,
    resolve_database_url,
)


def test_url_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_database_url(None, tmp_path) == f"sqlite+aiosqlite:///{tmp_path}/beamclaw.db"
    assert (
        resolve_database_url("postgresql://u:p@h/db", tmp_path) == "postgresql+asyncpg://u:p@h/db"
    )
    monkeypatch.setenv("BEAMCLAW_DATABASE_URL", "postgres://x@y/z")
    assert resolve_database_url("sqlite:///ignored.db", tmp_path) == "postgresql+asyncpg://x@y/z"


def test_masked_hides_password() -> None:
    assert "secretpw" not in masked("postgresql+asyncpg://user:secretpw@host:5432/db")
    assert normalise_url("sqlite:///a.db") == "sqlite+aiosqlite:///a.db"


async def _tables(db: Database) -> set[str]:
    async with db.engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_sqlite_is_wal_and_migrates_idempotently(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/sub/dir/beamclaw.db")
    try:
        await db.check()
        heads = await db.migrate()
        assert set(heads) == expected_heads()
        assert "memory_0002" in heads
        assert await db.migrate() == heads  # second run is a no-op
        tables = await _tables(db)
        assert {"memory_entries", "embedding_cache", "memory_sources", "alembic_version"} <= tables
        async with db.engine.connect() as conn:
            mode = (await conn.execute(text("PRAGMA journal_mode"))).scalar_one()
            fks = (await conn.execute(text("PRAGMA foreign_keys"))).scalar_one()
        assert mode == "wal"
        assert fks == 1
        assert await db.current_heads() == set(heads)
    finally:
        await db.dispose()


@pytest.mark.postgres
async def test_postgres_migrates_every_branch(postgres_url: str) -> None:
    db = Database(postgres_url)
    try:
        await db.check()
        heads = await db.migrate()
        assert set(heads) == expected_heads()
        assert await db.migrate() == heads
        assert {"memory_entries", "embedding_cache"} <= await _tables(db)
    finally:
        await db.dispose()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_unreachable_postgres_is_one_clear_error() -> None:
    db = Database(f"postgresql://nobody:pw-should-not-show@127.0.0.1:{_free_port()}/x")
    try:
        with pytest.raises(DatabaseUnavailableError) as err:
            await db.check()
        assert "127.0.0.1" in str(err.value)
        assert "pw-should-not-show" not in str(err.value)
    finally:
        await db.dispose()


async def test_unopenable_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    db = Database(f"sqlite:///{blocker}")  # a directory cannot be opened as a database
    try:
        with pytest.raises(DatabaseUnavailableError, match="unavailable"):
            await db.check()
    finally:
        await db.dispose()
        # aiosqlite finalises the failed connection from its worker thread; let that
        # happen while this test's event loop is still open (else it warns later)
        gc.collect()
        await asyncio.sleep(0.05)


FAILING_REVISION = '''"""a revision that creates a table and then fails

Revision ID: broken_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "broken_0001"
down_revision = None
branch_labels = ("broken",)
depends_on = None


def upgrade() -> None:
    op.create_table("half_done", sa.Column("id", sa.Integer, primary_key=True))
    op.execute("SELECT * FROM no_such_table_anywhere")


def downgrade() -> None:
    op.drop_table("half_done")
'''


async def _assert_failing_migration_is_atomic(url: str, tmp_path: Path) -> None:
    versions = tmp_path / "broken_versions"
    versions.mkdir()
    (versions / "broken_0001.py").write_text(FAILING_REVISION)
    db = Database(url)
    try:
        await db.migrate()
        before = await _tables(db)
        with pytest.raises(MigrationError):
            await db.migrate(extra_locations=[str(versions)])
        after = await _tables(db)
        assert "half_done" not in after
        assert after == before
        assert "broken_0001" not in await db.current_heads()
    finally:
        await db.dispose()


async def test_a_failing_migration_leaves_nothing_half_done_sqlite(tmp_path: Path) -> None:
    """A migration interrupted half-way (here: failing) must not leave its tables behind,
    or the next start fails with "table already exists" (seen after kill -9 at start)."""
    await _assert_failing_migration_is_atomic(f"sqlite:///{tmp_path}/atomic.db", tmp_path)


@pytest.mark.postgres
async def test_a_failing_migration_leaves_nothing_half_done_postgres(
    postgres_url: str, tmp_path: Path
) -> None:
    await _assert_failing_migration_is_atomic(postgres_url, tmp_path)
