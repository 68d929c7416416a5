"""The shared database: units of work on SQLAlchemy connections, and migrations.

Default: SQLite at ``$BEAMCLAW_HOME/beamclaw.db`` in WAL mode. Scale-out: PostgreSQL
(asyncpg) when ``BEAMCLAW_DATABASE_URL`` (or ``[memory] database_url``) is set. Every
package contributes Alembic revisions through the ``beamclaw.migrations`` entry point
group (value: an importable package whose directory holds its revision files, each
package on its own branch); :meth:`Database.migrate` upgrades all heads at start.

Callers hand :meth:`Database.read` and :meth:`Database.write` a *unit of work*: a plain
function of one synchronous :class:`~sqlalchemy.engine.Connection`, run inside one
transaction. On SQLite it runs on a database thread with the standard ``sqlite3`` driver
(one thread hop per unit instead of several per statement, which is what an async driver
costs); writes go through a single writer thread whose transactions start with ``BEGIN
IMMEDIATE``, so they queue for the write lock instead of failing half-way; a *small*
write (a handful of rows by key) commits at once on the event loop's own connection when
the database is free, and queues for the writer thread when it is locked. On PostgreSQL
it runs through the async engine's ``run_sync``. A unit of work never awaits: the
transaction it holds cannot interleave with others on the event loop. WAL checkpoints run
on their own thread (:mod:`beamclaw_memory.checkpoint`).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from sqlalchemy import Engine, create_engine, event, pool, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from beamclaw_memory.checkpoint import WalCheckpointer
from beamclaw_memory.errors import DatabaseUnavailableError, MigrationError

if TYPE_CHECKING:
    from alembic.config import Config

DATABASE_URL_ENV = "BEAMCLAW_DATABASE_URL"
DB_FILE_NAME = "beamclaw.db"
MIGRATIONS_GROUP = "beamclaw.migrations"
READ_THREADS = 2
"""SQLite reader threads (WAL readers never wait for the writer)."""

T = TypeVar("T")
Work = Callable[[Connection], T]
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


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # The driver's own transaction handling never wraps DDL in a transaction, so a
    # migration killed half-way would leave tables without their alembic_version row.
    # Taking over BEGIN (see _begin) makes every transaction, DDL included, atomic.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run off the writer: WalCheckpointer
    cursor.close()


def _begin(statement: str) -> Callable[[Connection], None]:
    def begin(connection: Connection) -> None:
        # on the driver itself: SQLAlchemy's execution step costs more than the BEGIN;
        # inside a driver-level transaction (_HeldConnections.run_direct) SQLAlchemy's
        # autobegin joins it instead of starting another
        driver = connection.connection.driver_connection
        assert driver is not None
        if not driver.in_transaction:
            driver.execute(statement)

    return begin


def _no_wait(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute("PRAGMA busy_timeout=0")


def json_text(value: Any) -> str:
    """JSON columns' serializer: orjson (several times faster than ``json.dumps``; keys
    that are not strings are written as strings, as ``json.dumps`` does)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


_JSON = {"json_serializer": json_text, "json_deserializer": orjson.loads}


def _sqlite_engine(url: str, begin: str, *, wait: bool = True, **kwargs: Any) -> Engine:
    engine = create_engine(url, **_JSON, **kwargs)
    event.listen(engine, "connect", _sqlite_pragmas)
    if not wait:
        event.listen(engine, "connect", _no_wait)
    event.listen(engine, "begin", _begin(begin))
    return engine


class _BusyError(Exception):
    """The inline connection found the database locked before its unit started."""


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

    def __init__(self, url: str, *, echo: bool = False, pool_size: int = 10) -> None:
        self.url = normalise_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self._async: AsyncEngine | None = None
        self._writer: _HeldConnections | None = None
        self._inline: _HeldConnections | None = None
        self.queued_small_writes = 0
        """``small`` writes that found the database locked and went to the writer thread."""
        self.committed_writes = 0
        """Write units (transactions) this object committed, each kind of database."""
        self._reader: _HeldConnections | None = None
        self._write_thread: ThreadPoolExecutor | None = None
        self._read_threads: ThreadPoolExecutor | None = None
        self.checkpointer: WalCheckpointer | None = None
        """SQLite file databases: the background WAL checkpointer."""
        if not self.is_sqlite:
            self._async = create_async_engine(
                self.url,
                **_JSON,
                echo=echo,
                pool_pre_ping=True,
                pool_size=pool_size,
                max_overflow=pool_size,
            )
            return
        path = make_url(self.url).database
        in_memory = not path or path == ":memory:" or "mode=memory" in self.url
        if not in_memory:
            assert path is not None
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # One connection for the one writer thread; a private in-memory database has
        # only that connection, so its reads go to the writer too.
        sizes: dict[str, Any] = {} if in_memory else {"pool_size": 1, "max_overflow": 0}
        self._writer = _HeldConnections(
            self.url,
            "BEGIN IMMEDIATE",
            echo=echo,
            poolclass=pool.StaticPool if in_memory else pool.QueuePool,
            **sizes,
        )
        self._write_thread = ThreadPoolExecutor(1, thread_name_prefix="db-write")
        if in_memory:
            self._reader, self._read_threads = self._writer, self._write_thread
        else:
            assert path is not None
            self.checkpointer = WalCheckpointer(path)
            self._inline = _HeldConnections(
                self.url, "BEGIN IMMEDIATE", wait=False, echo=echo, pool_size=1, max_overflow=0
            )
            self._reader = _HeldConnections(
                self.url, "BEGIN", echo=echo, pool_size=READ_THREADS, max_overflow=0
            )
            self._read_threads = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="db-read")

    @property
    def display_url(self) -> str:
        return masked(self.url)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return "sqlite" if self.is_sqlite else "postgresql"

    async def read(self, work: Work[T], *, small: bool = False) -> T:
        """Run ``work`` in a read transaction (a consistent snapshot); returns its result.

        ``small``: a lookup of a few rows by key. On a SQLite file it then runs at once on
        the event loop's own connection (readers never wait for the writer in WAL mode),
        which costs less than the hop to a reader thread and back; in the rare moment
        SQLite answers "busy" it goes to a reader thread instead.
        """
        if self._async is not None:
            async with self._async.connect() as conn:
                return await conn.run_sync(work)
        assert self._reader is not None and self._read_threads is not None
        if small and self._inline is not None:
            try:
                return _unless_busy(self._inline, work, begin="BEGIN", any_time=True)
            except _BusyError:
                pass
        return await _on(self._read_threads, partial(self._reader.run_direct, work))

    async def write(self, work: Work[T], *, small: bool = False) -> T:
        """Run ``work`` in a write transaction, committed when it returns and rolled back
        when it raises. On SQLite the transaction holds the write lock from its start.

        ``small``: the unit changes a handful of rows found by key (a store's hot path).
        On a SQLite file it then runs at once, on the event loop's own connection, when
        the database is not locked — a commit there costs less than the hop to the writer
        thread and back, and never waits: checkpoints run on their own thread and a locked
        database (the writer thread or another process mid-transaction) sends the unit to
        the writer thread's queue instead.

        A cancelled caller does not cancel a unit on the writer thread: it still commits,
        and only its result is lost.
        """
        result = await self._write(work, small)
        self.committed_writes += 1
        return result

    async def _write(self, work: Work[T], small: bool) -> T:
        if self._async is not None:
            async with self._async.begin() as conn:
                return await conn.run_sync(work)
        assert self._writer is not None and self._write_thread is not None
        try:
            if not small:
                return await _on(self._write_thread, partial(self._writer.run, work))
            if self._inline is not None:
                try:
                    return _unless_busy(self._inline, work)
                except _BusyError:
                    self.queued_small_writes += 1
            return await _on(self._write_thread, partial(self._writer.run_direct, work))
        finally:
            if self.checkpointer is not None:
                self.checkpointer.wrote()

    async def check(self) -> None:
        """Open a connection and run ``SELECT 1``; raise :class:`DatabaseUnavailableError`."""
        try:
            await self.read(lambda conn: conn.execute(text("SELECT 1")).scalar())
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
            return await self.write(partial(_upgrade, locations=locations))
        except Exception as exc:
            raise MigrationError(f"migrating {self.display_url} failed: {_reason(exc)}") from exc

    async def current_heads(self) -> set[str]:
        """Revisions currently recorded in the database."""
        from alembic.runtime.migration import MigrationContext  # Alembic loads only to migrate

        return await self.read(lambda c: set(MigrationContext.configure(c).get_current_heads()))

    async def dispose(self) -> None:
        """Close every connection and stop the database threads (idempotent)."""
        if self._async is not None:
            await self._async.dispose()
            return
        if self._inline is not None:
            self._inline.close()
        for connections, threads in (
            (self._reader, self._read_threads),
            (self._writer, self._write_thread),
        ):
            if connections is None or threads is None:
                continue
            await asyncio.to_thread(threads.shutdown)  # lets running units finish
            connections.close()
        if self.checkpointer is not None:
            checkpointer, self.checkpointer = self.checkpointer, None
            await asyncio.to_thread(checkpointer.close)


async def _on(threads: ThreadPoolExecutor, work: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(threads, work)


def _unless_busy(
    connections: _HeldConnections,
    work: Work[T],
    *,
    begin: str | None = None,
    any_time: bool = False,
) -> T:
    """``work`` on this thread's connection; :class:`_BusyError` if the database was locked
    before it started (a lock error after it started is the unit's own and propagates,
    unless ``any_time``: a read-only unit can be redone elsewhere whenever it was refused).

    ``begin``: the statement opening the transaction, when not the connections' own."""
    started = False

    def run(conn: Connection) -> T:
        nonlocal started
        started = True
        return work(conn)

    try:
        return connections.run_direct(run, begin)
    except (sqlite3.OperationalError, OperationalError) as exc:
        orig = getattr(exc, "orig", exc)
        if (any_time or not started) and getattr(orig, "sqlite_errorname", "") in (
            "SQLITE_BUSY",
            "SQLITE_LOCKED",
        ):
            raise _BusyError from exc
        raise


class _HeldConnections:
    """One connection per database thread, opened on first use and kept open: checking a
    connection out of the pool and resetting it on return cost as much as a small unit
    of work. Closed by :meth:`close` (SQLite connections may be closed from any thread).

    ``begin`` opens every transaction on these connections, SQLAlchemy's (through the
    engine's ``begin`` event) and :meth:`run_direct`'s alike."""

    def __init__(self, url: str, begin: str, *, wait: bool = True, **engine_args: Any) -> None:
        self.engine = _sqlite_engine(url, begin, wait=wait, **engine_args)
        self._begin = begin
        self._local = threading.local()
        self._opened: list[Connection] = []
        self._lock = threading.Lock()

    def _held(self) -> tuple[Connection, sqlite3.Connection]:
        held: tuple[Connection, sqlite3.Connection] | None = getattr(self._local, "held", None)
        if held is None or held[0].closed:
            conn = self.engine.connect()
            driver = conn.connection.driver_connection
            assert isinstance(driver, sqlite3.Connection)
            held = (conn, driver)
            self._local.held = held
            with self._lock:
                self._opened.append(conn)
        return held

    def run(self, work: Work[T]) -> T:
        """``work`` in a SQLAlchemy transaction on this thread's connection; the unit may
        drive the transaction itself (Alembic does)."""
        conn, _driver = self._held()
        with conn.begin():
            return work(conn)

    def run_direct(self, work: Work[T], begin: str | None = None) -> T:
        """``work`` in a transaction begun and ended on the driver itself.

        For units that never begin or commit themselves (reads, small writes): SQLAlchemy's
        transaction objects and events cost ~0.1 ms per unit, as much as the unit. A
        statement run through SQLAlchemy inside it joins the transaction (see ``_begin``)
        and SQLAlchemy's commit or rollback then ends it. ``begin`` replaces the
        connections' own opening statement for this unit (``BEGIN`` for a read).
        """
        conn, driver = self._held()
        driver.execute(begin or self._begin)
        try:
            result = work(conn)
        except BaseException:
            if conn.in_transaction():
                conn.rollback()
            else:
                driver.rollback()
            raise
        if conn.in_transaction():
            conn.commit()
        else:
            driver.commit()
        return result

    def close(self) -> None:
        """Close every held connection and the engine's pool (idempotent)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self.engine.dispose()


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
    """Head revisions of every installed package's migration branch."""
    from alembic.script import ScriptDirectory

    cfg = alembic_config(migration_locations(extra_locations))
    return set(ScriptDirectory.from_config(cfg).get_heads())


def _upgrade(connection: Connection, *, locations: list[str]) -> list[str]:
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    command.upgrade(alembic_config(locations, connection), "heads")
    return sorted(MigrationContext.configure(connection).get_current_heads())


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    base = orig if isinstance(orig, BaseException) else exc
    text_ = str(base).strip().splitlines()
    return text_[0] if text_ else type(base).__name__
