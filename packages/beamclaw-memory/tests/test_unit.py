"""The unit of work, the one door to the database, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import sqlalchemy as sa

from beamclaw_memory import Database, NestedUnitError, Prepared, Unit, UnitClosedError
from beamclaw_memory.errors import UnitOfWorkError

metadata = sa.MetaData()
notes = sa.Table(
    "unit_notes",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("n", sa.Integer, nullable=False),
)
ADD = Prepared(notes.insert().values(id=sa.bindparam("b_id"), n=sa.bindparam("b_n")))
COUNT = Prepared(sa.select(sa.func.count()).select_from(notes))
GET = Prepared(sa.select(notes.c.n).where(notes.c.id == sa.bindparam("b_id")))
BUMP = Prepared(notes.update().where(notes.c.id == sa.bindparam("b_id")).values(n=notes.c.n + 1))


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    await database.write(lambda unit: metadata.create_all(unit.connection))
    yield database
    await database.dispose()


async def _count(db: Database) -> int:
    return int((await db.read(lambda unit: unit.rows(COUNT)))[0][0])


def _boom(unit: Unit) -> None:
    unit.run(ADD, {"b_id": "lost", "b_n": 1})
    unit.execute(notes.insert().values(id="lost too", n=2))
    raise RuntimeError("boom")


async def test_a_unit_commits_when_it_returns_and_rolls_back_when_it_raises(db: Database) -> None:
    def add_two(unit: Unit) -> int:
        unit.run(ADD, {"b_id": "a", "b_n": 1})
        unit.execute(notes.insert().values(id="b", n=2))  # both kinds, one transaction
        return unit.run(BUMP, {"b_id": "a"})

    assert await db.write(add_two) == 1
    with pytest.raises(RuntimeError, match="boom"):
        await db.write(_boom)
    hot_only: list[dict[str, Any]] = [{"b_id": "c", "b_n": 3}, {"b_id": "a", "b_n": 9}]
    with pytest.raises(sa.exc.IntegrityError):  # SQLAlchemy's error on every path
        await db.write(lambda unit: unit.run_many(ADD, hot_only))
    assert await _count(db) == 2
    assert await db.read(lambda unit: unit.rows(GET, {"b_id": "a"})) == [(2,)]


@pytest.mark.parametrize("hot", [True, False], ids=["inline", "thread"])
async def test_a_unit_inside_a_unit_is_refused(db: Database, hot: bool) -> None:
    def nested(unit: Unit) -> None:
        if hot:
            unit.run(ADD, {"b_id": "outer", "b_n": 1})
        else:
            unit.execute(notes.insert().values(id="outer", n=1))
        db.write(lambda inner: inner.run(ADD, {"b_id": "inner", "b_n": 2}))

    for start in (db.write, db.read):
        with pytest.raises(NestedUnitError):
            await start(nested)
    assert await _count(db) == 0  # the outer unit was rolled back as well


async def test_a_unit_is_usable_only_inside_its_transaction(db: Database) -> None:
    kept: list[Unit] = []
    await db.write(lambda unit: kept.append(unit))
    with pytest.raises(UnitClosedError):
        kept[0].run(ADD, {"b_id": "late", "b_n": 1})
    with pytest.raises(UnitClosedError):
        kept[0].execute(sa.select(notes.c.id))

    async def not_a_unit(unit: Unit) -> None:
        unit.run(ADD, {"b_id": "never", "b_n": 1})

    with pytest.raises(UnitOfWorkError, match="never awaits"):
        await db.write(not_a_unit)  # type: ignore[arg-type]  # the misuse under test
    assert await _count(db) == 0


async def test_the_engine_decides_where_a_unit_runs(db: Database) -> None:
    loop = threading.current_thread().name

    def where(unit: Unit, *, hot: bool) -> str:
        if hot:
            unit.rows(COUNT)
        else:
            unit.execute(sa.select(sa.func.count()).select_from(notes))
        return threading.current_thread().name

    ran = {
        (kind, hot): await start(lambda unit, hot=hot: where(unit, hot=hot))
        for kind, start in (("write", db.write), ("read", db.read))
        for hot in (True, False)
    }
    if db.is_sqlite:
        # prepared statements inline on the loop's connection; larger work on a thread
        assert ran["write", True] == ran["read", True] == loop
        assert ran["write", False].startswith("db-write")
        assert ran["read", False].startswith("db-read")
    else:
        # PostgreSQL: every unit on the async driver, on the loop (never a thread)
        assert set(ran.values()) == {loop}


async def test_a_unit_sent_to_a_thread_commits_once(db: Database) -> None:
    # the inline attempt that reached a statement which is not prepared is rolled back
    # and the unit runs again on the writer thread: its rows are there once
    runs: list[str] = []

    def hot_then_not(unit: Unit) -> None:
        runs.append(threading.current_thread().name)
        unit.run(ADD, {"b_id": "x", "b_n": 1})
        unit.execute(notes.update().values(n=notes.c.n + 10))

    await db.write(hot_then_not)
    assert len(runs) == (2 if db.is_sqlite else 1)
    assert await db.read(lambda unit: unit.rows(GET, {"b_id": "x"})) == [(11,)]
    assert db.committed_writes == 2  # create_all and this one


async def test_concurrent_hot_writes_each_commit(db: Database) -> None:
    await asyncio.gather(
        *(db.write(lambda unit, i=i: unit.run(ADD, {"b_id": f"k{i}", "b_n": i})) for i in range(20))
    )
    assert await _count(db) == 20
