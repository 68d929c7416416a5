"""The shared database: units of work, migrations, health check.

Default: SQLite at ``$BEAMCLAW_HOME/beamclaw.db`` in WAL mode. Scale-out: PostgreSQL
(asyncpg) when ``BEAMCLAW_DATABASE_URL`` (or ``[memory] database_url``) is set. Every
package contributes Alembic revisions through the ``beamclaw.migrations`` entry point
group (value: an importable package whose directory holds its revision files, each
package on its own branch); :meth:`Database.migrate` upgrades all heads at start.

Alembic is imported only when there is migration work: ``migrate`` first compares the
heads the version files declare (read with :mod:`ast`, see
:mod:`beamclaw_memory.migration_heads`) with the revisions ``alembic_version`` records
(plain SQL); when they are equal the database is up to date and nothing more runs. Any
difference, and any version file that module does not read with certainty, goes through
``alembic.command.upgrade`` as before, so whatever is wrong is reported by Alembic.

One door: callers hand :meth:`Database.read` and :meth:`Database.write` a *unit of work*,
a plain function of one :class:`~beamclaw_memory.Unit` run inside one transaction
(:mod:`beamclaw_memory.unit`). Where it runs is the engine's decision, never the
caller's: :mod:`beamclaw_memory.sqlite_engine` (inline on the event loop for prepared
statements, else a database thread) and :mod:`beamclaw_memory.postgres_engine` (the
async driver). A unit refused for a passing reason — the database locked, its disk full,
a disk I/O error (:mod:`beamclaw_memory.unavailable`) — raises
:class:`~beamclaw_memory.errors.StorageUnavailableError` from either door.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine, Iterable
from functools import partial
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from beamclaw_memory.checkpoint import WalCheckpointer
from beamclaw_memory.errors import (
    DatabaseUnavailableError,
    MigrationError,
    StorageUnavailableError,
)
from beamclaw_memory.migration_heads import parse_heads, recorded_heads
from beamclaw_memory.sqlite_engine import BUSY_TIMEOUT_MS, SqliteEngine
from beamclaw_memory.unavailable import unavailable_reason
from beamclaw_memory.unit import Unit, refuse_nested

if TYPE_CHECKING:
    from alembic.config import Config

    from beamclaw_memory.postgres_engine import PostgresEngine

DATABASE_URL_ENV = "BEAMCLAW_DATABASE_URL"
DB_FILE_NAME = "beamclaw.db"
MIGRATIONS_GROUP = "beamclaw.migrations"

T = TypeVar("T")
Work = Callable[[Unit], T]
"""A unit of work: runs inside one transaction, synchronously, and never awaits."""


def resolve_database_url(configured: str | None, home: Path) -> str:
    """``BEAMCLAW_DATABASE_URL`` > configured URL > SQLite file in ``home``; normalised."""
    url = os.environ.get(DATABASE_URL_ENV) or configured or f"sqlite:///{home / DB_FILE_NAME}"
    return normalise_url(url)


def normalise_url(url: str) -> str:
    """Pick the driver: ``postgres[ql]://`` → asyncpg, ``sqlite[+driver]://`` → sqlite3."""
    for prefix in ("postgres://", "postgresql://", "postgresql+psycopg://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    for prefix in ("sqlite+aiosqlite://", "sqlite+pysqlite://"):
        if url.startswith(prefix):
            return "sqlite://" + url[len(prefix) :]
    return url


def masked(url: str) -> str:
    """The URL with its password hidden, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<invalid url>"


def migration_locations(extra: Iterable[str] = ()) -> list[str]:
    """Directories of every installed package's revisions (entry points) plus ``extra``."""
    found: list[str] = []
    for ep in sorted(entry_points(group=MIGRATIONS_GROUP), key=lambda e: e.name):
        module = import_module(ep.value)
        found.extend(str(Path(p)) for p in module.__path__)
    found.extend(extra)
    return found


class Database:
    """The process's database: units of work, migrations, health check."""

    def __init__(
        self,
        url: str,
        *,
        echo: bool = False,
        pool_size: int = 10,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        """``busy_timeout_ms``: how long a SQLite write waits for another process's lock
        (see :mod:`~beamclaw_memory.sqlite_engine`)."""
        self.url = normalise_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self._engine: SqliteEngine | PostgresEngine
        if self.is_sqlite:
            self._engine = SqliteEngine(self.url, echo=echo, busy_timeout_ms=busy_timeout_ms)
        else:  # SQLAlchemy's asyncio layer (and its ORM) only for PostgreSQL: ~0.1 s at start
            from beamclaw_memory.postgres_engine import PostgresEngine

            self._engine = PostgresEngine(self.url, echo=echo, pool_size=pool_size)
        self.committed_writes = 0
        """Write units (transactions) this object committed, each kind of database."""

    @property
    def display_url(self) -> str:
        return masked(self.url)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return "sqlite" if self.is_sqlite else "postgresql"

    @property
    def checkpointer(self) -> WalCheckpointer | None:
        """SQLite file databases: the background WAL checkpointer."""
        return self._engine.checkpointer

    @property
    def queued_writes(self) -> int:
        """Writes the SQLite engine meant to run inline but found the database locked
        (another writer mid-transaction): they waited on the writer thread instead."""
        return self._engine.queued_writes

    @property
    def failed_fast(self) -> int:
        """SQLite writes that failed on a lock without waiting: another write gave up on
        it while they were queued behind it (PostgreSQL: always 0)."""
        return self._engine.failed_fast

    def read(self, work: Work[T]) -> Coroutine[Any, Any, T]:
        """Run ``work`` in a read transaction (a consistent snapshot); returns its result.

        Raises :class:`~beamclaw_memory.NestedUnitError` at once when called from inside
        a unit of work."""
        refuse_nested()
        return self._unavailable_as_error(self._engine.read(work))

    def write(self, work: Work[T]) -> Coroutine[Any, Any, T]:
        """Run ``work`` in a write transaction, committed when it returns and rolled back
        when it raises. On SQLite the transaction holds the write lock from its first
        statement, so a read-then-write never fails half-way.

        A cancelled caller does not cancel a unit already on a database thread: it still
        commits, and only its result is lost. Raises
        :class:`~beamclaw_memory.NestedUnitError` at once when called from inside a unit."""
        refuse_nested()
        return self._write(work)

    async def _write(self, work: Work[T]) -> T:
        result = await self._unavailable_as_error(self._engine.write(work))
        self.committed_writes += 1
        return result

    async def _unavailable_as_error(self, running: Coroutine[Any, Any, T]) -> T:
        """``running``'s result; a lock, a full disk or a disk I/O error raised as
        :class:`StorageUnavailableError` (every other error as it is)."""
        try:
            return await running
        except DBAPIError as exc:
            reason = unavailable_reason(exc)
            if reason is None:
                raise
            raise StorageUnavailableError(self.display_url, reason, str(exc.orig)) from exc

    async def check(self) -> None:
        """Open a connection and run ``SELECT 1``; raise :class:`DatabaseUnavailableError`."""
        try:
            await self.read(lambda unit: unit.execute(text("SELECT 1")).scalar())
        except (SQLAlchemyError, OSError, StorageUnavailableError) as exc:
            raise DatabaseUnavailableError(self.display_url, _reason(exc)) from exc

    async def migrate(self, extra_locations: Iterable[str] = ()) -> list[str]:
        """Upgrade every package's branch to its head, all in one transaction.

        Returns the applied head revisions. An unreachable database is a
        :class:`DatabaseUnavailableError`; a failing revision is a :class:`MigrationError`
        and leaves the schema as it was (DDL is transactional on SQLite and PostgreSQL).
        On PostgreSQL it runs under an advisory lock: nodes that start together migrate
        once (the others wait, then find nothing to do).
        """
        locations = migration_locations(extra_locations)
        await self.check()
        expected = parse_heads(locations)
        if expected is not None:
            try:
                current = await self.current_heads()
            except SQLAlchemyError:
                pass  # an odd version table: Alembic says what is wrong with it
            else:
                if current == expected:
                    return sorted(current)
        try:
            return await self.write(partial(_upgrade, locations=locations))
        except Exception as exc:
            raise MigrationError(f"migrating {self.display_url} failed: {_reason(exc)}") from exc

    async def current_heads(self) -> set[str]:
        """Revisions currently recorded in the database (plain SQL, no Alembic)."""
        return await self.read(lambda unit: recorded_heads(unit.connection))

    async def dispose(self) -> None:
        """Close every connection and stop the database threads (idempotent)."""
        await self._engine.dispose()


def alembic_config(locations: list[str], connection: Connection | None = None) -> Config:
    """An in-memory Alembic config over the shared ``env.py`` and the given revisions."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", os.pathsep.join(locations))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def expected_heads(extra_locations: Iterable[str] = ()) -> set[str]:
    """Head revisions of every installed package's migration branch.

    Read from the version files' source; Alembic is asked only for files that reading
    does not understand with certainty (and then raises what it raises)."""
    locations = migration_locations(extra_locations)
    parsed = parse_heads(locations)
    if parsed is not None:
        return parsed
    from alembic.script import ScriptDirectory

    return set(ScriptDirectory.from_config(alembic_config(locations)).get_heads())


MIGRATION_LOCK_KEY = 0x6265616D636C6177  # "beamclaw"
"""The PostgreSQL advisory lock (transaction-scoped) that migrations run under: of
several nodes starting together, one migrates and the others then find the heads applied."""


def _upgrade(unit: Unit, *, locations: list[str]) -> list[str]:
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    connection = unit.connection
    if unit.dialect == "postgresql":
        connection.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})"))
    command.upgrade(alembic_config(locations, connection), "heads")
    return sorted(MigrationContext.configure(connection).get_current_heads())


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    base = orig if isinstance(orig, BaseException) else exc
    text_ = str(base).strip().splitlines()
    return text_[0] if text_ else type(base).__name__
