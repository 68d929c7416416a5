"""Migrating without Alembic when there is nothing to migrate, on SQLite and PostgreSQL.

The heads read from the version files' source must be Alembic's own; a database at them
must migrate without importing Alembic (checked in a fresh interpreter); a database
behind them, empty, or in a state Alembic does not know must still go through Alembic,
so its errors stay Alembic's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from beamclaw_memory import Database, MigrationError, Unit, expected_heads
from beamclaw_memory.migration_heads import parse_heads, read_revision_file
from beamclaw_memory.storage import alembic_config, migration_locations


def _alembic_heads(locations: list[str]) -> set[str]:
    return set(ScriptDirectory.from_config(alembic_config(locations)).get_heads())


def test_parsed_heads_are_alembics_for_the_installed_locations() -> None:
    locations = migration_locations()
    assert parse_heads(locations) == _alembic_heads(locations)
    assert expected_heads() == _alembic_heads(locations)


def _revision(revision: str, down: str, *, labels: str = "None", depends: str = "None") -> str:
    return (
        f'"""{revision}"""\n\n'
        f'revision = "{revision}"\n'
        f"down_revision = {down}\n"
        f"branch_labels = {labels}\n"
        f"depends_on = {depends}\n\n\n"
        "def upgrade() -> None:\n    pass\n\n\n"
        "def downgrade() -> None:\n    pass\n"
    )


ANNOTATED = '''"""b1: the typed form of newer Alembic templates"""

from collections.abc import Sequence

revision: str = "b1"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = "bee"
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    revision_note = "a local name is not a declaration"
    del revision_note
'''


def test_parsed_heads_are_alembics_for_every_declaration_form(tmp_path: Path) -> None:
    """Tuple and string branch labels, annotated declarations, a list ``down_revision``,
    a merge of two branches, a cross-branch ``depends_on`` (which makes no head), and the
    files Alembic skips (``__init__.py``, lock files, other suffixes, subdirectories)."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "a1.py").write_text(_revision("a1", "None", labels='("alpha",)'))
    (one / "a2.py").write_text(_revision("a2", '["a1"]'))
    (one / "b1.py").write_text(ANNOTATED)
    (one / "m1.py").write_text(_revision("m1", '("a2", "b1")'))
    (two / "c1.py").write_text(_revision("c1", "None", labels='"sea"'))
    (two / "c2.py").write_text(_revision("c2", '"c1"', depends='("a2",)'))
    (two / "d1.py").write_text(_revision("d1", "()", labels='["dee"]', depends='"c1"'))
    (two / "__init__.py").write_text("revision = 'not a revision'\n")
    (two / ".#c3.py").write_text("an editor's lock file")
    (two / "notes.txt").write_text("revision = 'no'")
    (two / "nested").mkdir()
    (two / "nested" / "e1.py").write_text(_revision("e1", "None", labels='"e"'))
    locations = [str(one), str(two), str(tmp_path / "missing")]
    assert parse_heads(locations) == _alembic_heads(locations) == {"m1", "c2", "d1"}
    # a location named twice (or through another path) is read once
    assert parse_heads([*locations, str(one / ".." / "one")]) == {"m1", "c2", "d1"}


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('revision = "x" + "y"\ndown_revision = None\n', id="computed-revision"),
        pytest.param("down_revision = None\n", id="no-revision"),
        pytest.param('revision = ""\ndown_revision = None\n', id="empty-revision"),
        pytest.param('revision = "a-1"\ndown_revision = None\n', id="illegal-character"),
        pytest.param('revision = "r"\ndown_revision = 5\n', id="number-down-revision"),
        pytest.param('revision = "r"\ndown_revision = ("a", 1)\n', id="mixed-tuple"),
        pytest.param('revision = "r"\ndown_revision = None\ndepends_on = {"a"}\n', id="set"),
        pytest.param(
            'import os\nrevision = "r"\nif os.sep:\n    revision = "s"\ndown_revision = None\n',
            id="conditional",
        ),
        pytest.param('revision, down_revision = "r", None\n', id="unpacked"),
        pytest.param('revision = down_revision = "r"\n', id="chained"),
        pytest.param("from elsewhere import revision\ndown_revision = None\n", id="imported"),
        pytest.param(
            'revision = "r"\ndown_revision = None\n\ndef f():\n    global revision\n',
            id="global",
        ),
        pytest.param('revision = "r"\ndown_revision = "nowhere"\n', id="unknown-down"),
        pytest.param("revision = (\n", id="syntax-error"),
    ],
)
def test_what_is_not_read_with_certainty_is_left_to_alembic(tmp_path: Path, source: str) -> None:
    (tmp_path / "r.py").write_text(source)
    assert parse_heads([str(tmp_path)]) is None


def test_duplicates_and_cycles_are_left_to_alembic(tmp_path: Path) -> None:
    dupes, cycle = tmp_path / "dupes", tmp_path / "cycle"
    dupes.mkdir()
    cycle.mkdir()
    (dupes / "a.py").write_text(_revision("a", "None"))
    (dupes / "b.py").write_text(_revision("a", "None"))
    (cycle / "base.py").write_text(_revision("base", "None"))
    (cycle / "x.py").write_text(_revision("x", '("base", "y")'))
    (cycle / "y.py").write_text(_revision("y", '"x"'))
    assert parse_heads([str(dupes)]) is None
    assert parse_heads([str(cycle)]) is None


def test_the_last_plain_assignment_wins_as_at_run_time() -> None:
    declared = read_revision_file(b'revision = "a"\nrevision = "b"\ndown_revision = None\n')
    assert declared.revision == "b"
    assert declared.down_revisions == ()


_DRIVER = """
import asyncio, json, sys
from beamclaw_memory import Database

async def main() -> None:
    db = Database(sys.argv[1])
    try:
        heads = await db.migrate()
    finally:
        await db.dispose()
    print(json.dumps({"heads": heads, "alembic": "alembic" in sys.modules}))

asyncio.run(main())
"""


def _migrate_in_a_fresh_process(url: str) -> tuple[list[str], bool]:
    """``Database.migrate`` in a new interpreter: its heads, and whether Alembic loaded."""
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["heads"], out["alembic"]


async def test_an_up_to_date_database_migrates_without_alembic(database_url: str) -> None:
    await _migrate(database_url)
    heads, alembic_loaded = _migrate_in_a_fresh_process(database_url)
    assert heads == sorted(expected_heads())
    assert not alembic_loaded


async def test_an_empty_database_is_migrated_by_alembic(database_url: str) -> None:
    heads, alembic_loaded = _migrate_in_a_fresh_process(database_url)
    assert heads == sorted(expected_heads())
    assert alembic_loaded
    # and from then on it is up to date
    assert _migrate_in_a_fresh_process(database_url) == (heads, False)


async def test_a_database_one_revision_behind_is_upgraded_by_alembic(database_url: str) -> None:
    await _migrate(database_url)

    def back_to_0002(unit: Unit) -> None:
        command.downgrade(alembic_config(migration_locations(), unit.connection), "memory_0002")

    await _write(database_url, back_to_0002)
    assert "memory_0002" in await _current(database_url)
    heads, alembic_loaded = _migrate_in_a_fresh_process(database_url)
    assert alembic_loaded
    assert heads == sorted(expected_heads())
    assert {"line_start", "line_end"} <= await _entry_columns(database_url)


async def test_an_unknown_recorded_revision_is_reported_by_alembic(database_url: str) -> None:
    await _migrate(database_url)
    await _write(
        database_url,
        lambda unit: unit.execute(text("INSERT INTO alembic_version VALUES ('nope_0001')")),
    )
    db = Database(database_url)
    try:
        with pytest.raises(MigrationError, match="nope_0001") as err:
            await db.migrate()
        assert type(err.value.__cause__).__module__.startswith("alembic")
    finally:
        await db.dispose()


async def test_a_version_file_reading_gives_up_on_still_fails_the_migration(
    database_url: str, tmp_path: Path
) -> None:
    """An extra location whose file reading gives up on (here: it does not parse) sends
    the migration to Alembic, whose error it reports, even on an up-to-date database."""
    await _migrate(database_url)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "x1.py").write_text("revision = (\n")
    db = Database(database_url)
    try:
        with pytest.raises(MigrationError) as err:
            await db.migrate(extra_locations=[str(broken)])
        assert isinstance(err.value.__cause__, SyntaxError)
    finally:
        await db.dispose()


async def _migrate(url: str) -> list[str]:
    db = Database(url)
    try:
        return await db.migrate()
    finally:
        await db.dispose()


async def _write(url: str, work: Callable[[Unit], object]) -> None:
    db = Database(url)
    try:
        await db.write(work)
    finally:
        await db.dispose()


async def _current(url: str) -> set[str]:
    db = Database(url)
    try:
        return await db.current_heads()
    finally:
        await db.dispose()


async def _entry_columns(url: str) -> set[str]:
    db = Database(url)
    try:
        return await db.read(
            lambda u: {c["name"] for c in inspect(u.connection).get_columns("memory_entries")}
        )
    finally:
        await db.dispose()
