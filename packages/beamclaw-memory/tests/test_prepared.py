"""Prepared statements: the same results on SQLite (driver direct) and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from beamclaw_memory import Database, Prepared, Unit

metadata = sa.MetaData()
things = sa.Table(
    "prepared_things",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("data", sa.JSON, nullable=True),
    sa.Column("score", sa.Float, nullable=True),
)
INSERT = Prepared(
    things.insert().values(
        id=sa.bindparam("b_id"),
        kind=sa.bindparam("b_kind"),
        data=sa.bindparam("b_data"),
        score=sa.bindparam("b_score"),
    )
)
NOT_NOTES = Prepared(  # a literal parameter and a literal LIMIT, as the store's markers use
    sa.select(things.c.id, things.c.data, things.c.score)
    .where(things.c.kind != "note", things.c.score > sa.bindparam("b_min"))
    .order_by(things.c.score.desc())
    .limit(2)
)
RESCORE = Prepared(
    things.update().where(things.c.kind == sa.bindparam("b_kind")).values(score=sa.bindparam("b_s"))
)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    await database.write(lambda u: metadata.create_all(u.connection))
    yield database
    await database.dispose()


async def test_rows_round_trip_json_literals_and_limits(db: Database) -> None:
    rows = [
        {"b_id": "a", "b_kind": "tool", "b_data": {"x": [1, "é"]}, "b_score": 0.5},
        {"b_id": "b", "b_kind": "note", "b_data": None, "b_score": 9.0},
        {"b_id": "c", "b_kind": "tool", "b_data": {"y": None}, "b_score": 2.5},
        {"b_id": "d", "b_kind": "tool", "b_data": [], "b_score": 1.5},
    ]
    await db.write(lambda u: u.run_many(INSERT, rows))
    found = await db.read(lambda u: u.rows(NOT_NOTES, {"b_min": 1.0}))
    assert found == [("c", {"y": None}, 2.5), ("d", [], 1.5)]
    changed = await db.write(lambda u: u.run(RESCORE, {"b_kind": "tool", "b_s": 0.0}))
    assert changed == 3
    assert await db.read(lambda u: u.rows(NOT_NOTES, {"b_min": -1.0})) == [
        ("a", {"x": [1, "é"]}, 0.0),
        ("c", {"y": None}, 0.0),
    ]


def _on_a_thread(work: Callable[[Unit], Any]) -> Callable[[Unit], Any]:
    """``work`` after a statement that is not prepared: on SQLite it runs on a thread."""

    def unit(u: Unit) -> Any:
        u.execute(sa.text("SELECT 1"))
        return work(u)

    return unit


@pytest.mark.parametrize("thread", [False, True], ids=["inline", "thread"])
async def test_driver_errors_are_sqlalchemys_on_every_dialect(db: Database, thread: bool) -> None:
    def where(work: Callable[[Unit], Any]) -> Callable[[Unit], Any]:
        return _on_a_thread(work) if thread else work

    row = {"b_id": "a", "b_kind": "tool", "b_data": None, "b_score": 1.0}
    await db.write(where(lambda u: u.run(INSERT, row)))
    # callers catch one exception tree, whichever path ran the statement
    with pytest.raises(sa.exc.IntegrityError):
        await db.write(where(lambda u: u.run(INSERT, row)))
    with pytest.raises(sa.exc.IntegrityError):
        await db.write(where(lambda u: u.run_many(INSERT, [{**row, "b_id": "b"}, row])))
    missing = Prepared(sa.select(things.c.id).where(things.c.id == sa.bindparam("b_id")))
    await db.write(lambda u: u.execute(sa.text("DROP TABLE prepared_things")))
    with pytest.raises(sa.exc.OperationalError if db.is_sqlite else sa.exc.ProgrammingError):
        await db.read(where(lambda u: u.rows(missing, {"b_id": "a"})))


async def test_a_statement_per_dialect_is_built_once_for_each(db: Database) -> None:
    built: list[str] = []

    def build(dialect: str) -> sa.Executable:
        built.append(dialect)
        return sa.select(sa.literal(dialect))

    named = Prepared(build)
    for _ in range(3):
        assert await db.read(lambda u: u.rows(named)) == [(db.dialect,)]
    assert built == [db.dialect]


async def test_what_needs_sqlalchemys_execution_is_refused_on_sqlite(tmp_path: Path) -> None:
    # (other dialects execute through SQLAlchemy, where both are fine)
    expanding = Prepared(
        sa.delete(things).where(things.c.id.in_(sa.bindparam("ids", expanding=True)))
    )
    defaults = sa.Table(
        "prepared_defaults",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("n", sa.Integer, default=1),
    )
    defaulted = Prepared(defaults.insert().values(id=sa.bindparam("b_id")))
    db = Database(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        with pytest.raises(ValueError, match="expanding"):
            await db.write(lambda u: u.run(expanding, {"ids": ["a"]}))
        with pytest.raises(ValueError, match="defaults"):
            await db.write(lambda u: u.run(defaulted, {"b_id": 1}))
    finally:
        await db.dispose()
