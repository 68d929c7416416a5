"""The shared database: async SQLAlchemy engine, session factory and migrations.

Default: SQLite at ``$BEAMCLAW_HOME/beamclaw.db`` in WAL mode (aiosqlite). Scale-out:
PostgreSQL (asyncpg) when ``BEAMCLAW_DATABASE_URL`` (or ``[memory] database_url``) is set.
Every package contributes Alembic revisions through the ``beamclaw.migrations`` entry
point group (value: an importable package whose directory holds its revision files, each
package on its own branch); :meth:`Database.migrate` upgrades all heads at start.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from beamclaw_memory.errors import DatabaseUnavailableError, MigrationError

DATABASE_URL_ENV = "BEAMCLAW_DATABASE_URL"
DB_FILE_NAME = "beamclaw.db"
MIGRATIONS_GROUP = "beamclaw.migrations"


def resolve_database_url(configured: str | None, home: Path) -> str:
    """``BEAMCLAW_DATABASE_URL`` > configured URL > SQLite file in ``home``; normalised."""
    url = os.environ.get(DATABASE_URL_ENV) or configured or f"sqlite:///{home / DB_FILE_NAME}"
    return normalise_url(url)


def normalise_url(url: str) -> str:
    """Pick the async driver: ``postgres[ql]://`` → asyncpg, ``sqlite://`` → aiosqlite."""
    for prefix in ("postgres://", "postgresql://", "postgresql+psycopg://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    if url.startswith("sqlite://"):
        return "sqlite+aiosqlite://" + url[len("sqlite://") :]
    return url


def masked(url: str) -> str:
    """The URL with its password hidden, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<invalid url>"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # The driver's own transaction handling never wraps DDL in a transaction, so a
    # migration killed half-way would leave tables without their alembic_version row.
    # Taking over BEGIN (see _sqlite_begin) makes every transaction, DDL included, atomic.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN")


def migration_locations(extra: Iterable[str] = ()) -> list[str]:
    """Directories of every installed package's revisions (entry points) plus ``extra``."""
    found: list[str] = []
    for ep in sorted(entry_points(group=MIGRATIONS_GROUP), key=lambda e: e.name):
        module = import_module(ep.value)
        found.extend(str(Path(p)) for p in module.__path__)
    found.extend(extra)
    return found


class Database:
    """One engine and session factory for the whole process."""

    def __init__(self, url: str, *, echo: bool = False, pool_size: int = 10) -> None:
        self.url = normalise_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        kwargs: dict[str, Any] = {"echo": echo, "pool_pre_ping": not self.is_sqlite}
        if not self.is_sqlite:
            kwargs.update(pool_size=pool_size, max_overflow=pool_size)
        if self.is_sqlite:
            path = make_url(self.url).database
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.engine.sync_engine, "begin", _sqlite_begin)
        self.sessions: async_sessionmaker[AsyncSession] = async_sessionmaker(
            self.engine, expire_on_commit=False
        )

    @property
    def display_url(self) -> str:
        return masked(self.url)

    async def check(self) -> None:
        """Open a connection and run ``SELECT 1``; raise :class:`DatabaseUnavailableError`."""
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except (SQLAlchemyError, OSError) as exc:
            raise DatabaseUnavailableError(self.display_url, _reason(exc)) from exc

    async def migrate(self, extra_locations: Iterable[str] = ()) -> list[str]:
        """Upgrade every package's branch to its head, all in one transaction.

        Returns the applied head revisions. An unreachable database is a
        :class:`DatabaseUnavailableError`; a failing revision is a :class:`MigrationError`
        and leaves the schema as it was (DDL is transactional on SQLite and PostgreSQL).
        """
        locations = migration_locations(extra_locations)
        await self.check()
        try:
            async with self.engine.begin() as conn:
                return await conn.run_sync(_upgrade, locations)
        except Exception as exc:
            raise MigrationError(f"migrating {self.display_url} failed: {_reason(exc)}") from exc

    async def current_heads(self) -> set[str]:
        """Revisions currently recorded in the database."""
        async with self.engine.connect() as conn:
            return await conn.run_sync(
                lambda c: set(MigrationContext.configure(c).get_current_heads())
            )

    async def dispose(self) -> None:
        await self.engine.dispose()


def alembic_config(locations: list[str], connection: Connection | None = None) -> Config:
    """An in-memory Alembic config over the shared ``env.py`` and the given revisions."""
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", os.pathsep.join(locations))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def expected_heads(extra_locations: Iterable[str] = ()) -> set[str]:
    """Head revisions of every installed package's migration branch."""
    cfg = alembic_config(migration_locations(extra_locations))
    return set(ScriptDirectory.from_config(cfg).get_heads())


def _upgrade(connection: Connection, locations: list[str]) -> list[str]:
    command.upgrade(alembic_config(locations, connection), "heads")
    return sorted(MigrationContext.configure(connection).get_current_heads())


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    base = orig if isinstance(orig, BaseException) else exc
    text_ = str(base).strip().splitlines()
    return text_[0] if text_ else type(base).__name__
