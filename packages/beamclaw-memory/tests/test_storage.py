"""The shared database: URL resolution, SQLite WAL, migrations on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import inspect, text

from beamclaw_memory import (
    Database,
    DatabaseUnavailableError,
    MigrationError,
    Prepared,
    StorageUnavailableError,
    Unit,
    expected_heads,
    masked,
    normalise_url,
    resolve_database_url,
)


def test_url_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_database_url(None, tmp_path) == f"sqlite:///{tmp_path}/beamclaw.db"
    assert (
        resolve_database_url("postgresql://u:p@h/db", tmp_path) == "postgresql+asyncpg://u:p@h/db"
    )
    monkeypatch.setenv("BEAMCLAW_DATABASE_URL", "postgres://x@y/z")
    assert resolve_database_url("sqlite:///ignored.db", tmp_path) == "postgresql+asyncpg://x@y/z"


def test_masked_hides_password() -> None:
    assert "secretpw" not in masked("postgresql+asyncpg://user:secretpw@host:5432/db")
    assert normalise_url("sqlite:///a.db") == "sqlite:///a.db"
    assert normalise_url("sqlite+aiosqlite:///a.db") == "sqlite:///a.db"


async def _tables(db: Database) -> set[str]:
    return set(await db.read(lambda u: inspect(u.connection).get_table_names()))


async def test_sqlite_is_wal_and_migrates_idempotently(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/sub/dir/beamclaw.db")
    try:
        await db.check()
        heads = await db.migrate()
        assert set(heads) == expected_heads()
        assert "memory_0004" in heads
        assert await db.migrate() == heads  # second run is a no-op
        tables = await _tables(db)
        assert {"memory_entries", "embedding_cache", "memory_sources", "alembic_version"} <= tables
        mode = await db.read(lambda c: c.execute(text("PRAGMA journal_mode")).scalar_one())
        fks = await db.read(lambda c: c.execute(text("PRAGMA foreign_keys")).scalar_one())
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


counter = sa.Table("counter", sa.MetaData(), sa.Column("n", sa.Integer))
COUNT = Prepared(sa.select(sa.func.count()).select_from(counter))
ADD = Prepared(counter.insert().values(n=sa.bindparam("b_n")))


async def _counter_db(url: str) -> Database:
    db = Database(url)
    await db.write(lambda u: u.execute(text("CREATE TABLE IF NOT EXISTS counter (n INTEGER)")))
    return db


def _bump(unit: Unit) -> int:
    """Read-then-write: fails with "database is locked" unless the transaction held the
    write lock from its start."""
    n = unit.execute(text("SELECT count(*) FROM counter")).scalar_one()
    time.sleep(0.002)  # widen the window between the read and the write
    unit.execute(text("INSERT INTO counter (n) VALUES (:n)"), {"n": n})
    return int(n)


def _hot_bump(unit: Unit) -> int:
    """:func:`_bump` of prepared statements (a store's hot path: the engine runs it inline)."""
    ((n,),) = unit.rows(COUNT)
    unit.run(ADD, {"b_n": n})
    return int(n)


async def _count(db: Database) -> int:
    return int((await db.read(lambda u: u.rows(COUNT)))[0][0])


async def test_sqlite_writers_of_two_databases_queue_for_the_lock(tmp_path: Path) -> None:
    # Two Database objects on one file stand for two processes sharing it.
    url = f"sqlite:///{tmp_path}/shared.db"
    first, second = await _counter_db(url), await _counter_db(url)
    try:
        results = await asyncio.gather(
            *(db.write(_bump) for _ in range(20) for db in (first, second))
        )
        assert sorted(results) == list(range(40))  # every read saw every earlier write
    finally:
        await first.dispose()
        await second.dispose()


async def test_sqlite_larger_units_run_off_the_event_loop(tmp_path: Path) -> None:
    db = await _counter_db(f"sqlite:///{tmp_path}/t.db")
    try:
        loop_thread = threading.current_thread().name

        def where(unit: Unit) -> str:
            unit.execute(text("SELECT 1"))
            return threading.current_thread().name

        names = {await db.write(where), await db.read(where)}
        assert loop_thread not in names
        # a unit that raises is rolled back, and the error reaches the caller
        with pytest.raises(RuntimeError, match="boom"):
            await db.write(lambda u: (_bump(u), _raise(RuntimeError("boom"))))
        assert await _count(db) == 0
    finally:
        await db.dispose()
        await db.dispose()  # idempotent


async def test_a_cancelled_caller_does_not_undo_its_write(tmp_path: Path) -> None:
    db = await _counter_db(f"sqlite:///{tmp_path}/t.db")
    try:
        started = threading.Event()

        def slow(unit: Unit) -> int:
            unit.execute(text("SELECT 1"))  # not prepared: on the writer thread
            started.set()
            time.sleep(0.05)
            return _bump(unit)

        task = asyncio.create_task(db.write(slow))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the next unit on the single writer runs after it: the row is there
        count = await db.write(lambda u: u.execute(text("SELECT count(*) FROM counter")).scalar())
        assert count == 1
    finally:
        await db.dispose()


async def test_in_memory_sqlite_reads_what_it_wrote() -> None:
    db = await _counter_db("sqlite://")
    try:
        await db.write(_bump)
        await db.write(_hot_bump)
        assert await _count(db) == 2
    finally:
        await db.dispose()


def _raise(exc: BaseException) -> None:
    raise exc


async def test_hot_writes_run_inline_and_queue_when_the_database_is_locked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.db"
    db = await _counter_db(f"sqlite:///{path}")

    def where(unit: Unit) -> str:
        _hot_bump(unit)
        return threading.current_thread().name

    try:
        loop_thread = threading.current_thread().name
        assert await db.write(where) == loop_thread
        # another process holds the write lock: the hot write must not block the loop
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO counter (n) VALUES (100)")
        write = asyncio.create_task(db.write(where))
        ticks = 0
        for _ in range(10):  # the loop keeps running while the write waits on its thread
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 10 and not write.done()
        assert db.queued_writes == 1
        other.execute("COMMIT")
        other.close()
        assert (await write).startswith("db-write")  # after the other writer, on the thread
        # a unit that raises inline is rolled back like any other
        with pytest.raises(RuntimeError, match="boom"):
            await db.write(lambda u: (_hot_bump(u), _raise(RuntimeError("boom"))))
        assert await _count(db) == 3
        assert db.queued_writes == 1  # a unit sent on for its statements is not "queued"
        await db.write(_bump)
        assert db.queued_writes == 1
    finally:
        await db.dispose()


async def test_writes_queued_behind_a_lock_that_timed_out_fail_without_waiting(
    tmp_path: Path,
) -> None:
    """Another process holds the write lock past the busy timeout: the first queued write
    waits the timeout and fails; the two queued behind it meanwhile fail at once, not a
    timeout each (before: three timeouts in a row). A write sent after that waits again,
    and commits once the lock is gone."""
    path = tmp_path / "t.db"
    db = Database(f"sqlite:///{path}", busy_timeout_ms=1_000)
    await db.write(lambda u: u.execute(text("CREATE TABLE counter (n INTEGER)")))
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO counter (n) VALUES (100)")
        started = time.monotonic()
        results = await asyncio.gather(
            *(db.write(_hot_bump) for _ in range(3)), return_exceptions=True
        )
        waited = time.monotonic() - started
        assert all(isinstance(r, StorageUnavailableError) for r in results), results
        assert (db.queued_writes, db.failed_fast) == (3, 2)
        assert waited < 2.5, f"{waited:.1f} s: the writes behind the first waited too"
        late = asyncio.create_task(db.write(_hot_bump))
        await asyncio.sleep(0.2)
        assert not late.done(), "a write sent after the failure waits for the lock"
        other.execute("COMMIT")
        await late
        assert db.failed_fast == 2
        assert await _count(db) == 2
    finally:
        other.close()
        await db.dispose()


async def test_hot_reads_run_inline_and_do_not_wait_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    db = await _counter_db(f"sqlite:///{path}")
    try:
        loop_thread = threading.current_thread().name
        assert await db.read(lambda u: (u.rows(COUNT), threading.current_thread().name)[1]) == (
            loop_thread
        )
        await db.write(_hot_bump)
        # a writer mid-transaction does not hold a reader up (WAL): the committed snapshot
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO counter (n) VALUES (100)")
        assert await _count(db) == 1
        other.execute("COMMIT")
        other.close()
    finally:
        await db.dispose()


async def test_a_refused_hot_read_waits_on_a_thread(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE counter (n INTEGER)")
    # a connection in exclusive locking mode (alone on the file) refuses every other
    other.execute("PRAGMA locking_mode=EXCLUSIVE")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO counter (n) VALUES (1)")
    other.execute("COMMIT")  # the exclusive lock stays until the mode is left
    db = Database(f"sqlite:///{path}")
    try:
        read = asyncio.create_task(_count(db))
        for _ in range(5):  # refused inline: it waits on a reader thread, not on the loop
            await asyncio.sleep(0.01)
        assert not read.done()
        other.execute("PRAGMA locking_mode=NORMAL")
        other.execute("SELECT count(*) FROM counter").fetchall()  # releases the lock
        other.close()
        assert await asyncio.wait_for(read, 10) == 1
        loop_thread = threading.current_thread().name
        assert await db.read(lambda u: (u.rows(COUNT), threading.current_thread().name)[1]) == (
            loop_thread
        )
    finally:
        await db.dispose()


@pytest.mark.parametrize("bump", [_hot_bump, _bump], ids=["inline", "thread"])
async def test_committed_writes_are_counted(tmp_path: Path, bump: Callable[[Unit], int]) -> None:
    db = await _counter_db(f"sqlite:///{tmp_path}/t.db")
    try:
        before = db.committed_writes
        await db.write(bump)
        with pytest.raises(RuntimeError, match="boom"):
            await db.write(lambda u: (bump(u), _raise(RuntimeError("boom"))))
        await db.read(lambda u: u.rows(COUNT))
        assert db.committed_writes == before + 1  # the rolled-back unit and the read are not
        assert await _count(db) == 1
    finally:
        await db.dispose()


@pytest.mark.parametrize("mixed", [False, True], ids=["prepared", "mixed"])
async def test_units_commit_and_roll_back_whole(tmp_path: Path, mixed: bool) -> None:
    # Units begin and end their transaction on the driver; prepared statements (on the
    # driver), others (through SQLAlchemy), or both, are one transaction either way.
    path = tmp_path / "t.db"
    db = await _counter_db(f"sqlite:///{path}")

    def add(unit: Unit, n: int) -> None:
        if mixed and n % 2:
            unit.execute(text("INSERT INTO counter (n) VALUES (:n)"), {"n": n})
        else:
            unit.run(ADD, {"b_n": n})

    try:
        await db.write(lambda u: add(u, 1))

        def two_then_fail(unit: Unit) -> None:
            add(unit, 2)
            add(unit, 3)
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError, match="boom"):
            await db.write(two_then_fail)
        await db.write(lambda u: (add(u, 4), add(u, 5)))
        # another connection sees exactly the committed units: nothing is left open
        other = sqlite3.connect(path)
        try:
            assert sorted(r[0] for r in other.execute("SELECT n FROM counter")) == [1, 4, 5]
        finally:
            other.close()
        # a read that fails leaves no transaction open either: the next write proceeds
        with pytest.raises(RuntimeError, match="boom"):
            await db.read(lambda u: (u.rows(COUNT), _raise(RuntimeError("boom"))))
        await db.write(lambda u: add(u, 6))
        assert await _count(db) == 4
    finally:
        await db.dispose()
