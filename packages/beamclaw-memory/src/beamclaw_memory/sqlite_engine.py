"""SQLite behind :class:`~beamclaw_memory.Database`: where each unit of work runs.

A unit runs with the standard ``sqlite3`` driver, one unit per thread hop at most (an
async driver costs a hop per cursor call). On a database *file* the engine decides, per
unit, without being told:

* **Inline**, on the event loop's own connection, first: a unit of prepared statements (a
  store's hot path — create a conversation, commit a step, look one up) commits a WAL
  transaction in tens of µs, less than the hop to a database thread and back. That
  connection has ``busy_timeout=0``, so the loop never waits on a lock.
* **On a database thread** when the inline attempt ends (rolled back):
  the unit ran a statement that is not prepared (larger work: migrations, retention,
  batch writes, searches), or the database was locked (the writer thread or another
  process mid-transaction). Writes go to one writer thread whose transactions begin with
  ``BEGIN IMMEDIATE`` (they queue for the lock instead of failing half-way), reads to
  :data:`READ_THREADS` reader threads (WAL readers never wait for the writer).

A write waits up to ``busy_timeout_ms`` (:data:`BUSY_TIMEOUT_MS`) for a lock another
process holds. When one write gives up on the lock, the writes that were queued behind it
meanwhile try once without waiting and fail at once if it is still held: before, each
waited its own full timeout in turn, so a person behind two writes waited 20-30 s for
the error.

A private in-memory database has one connection, on the writer thread, for every unit.
Each thread keeps its connection open (a pool checkout and reset cost as much as a small
unit). WAL checkpoints run on their own thread (:mod:`beamclaw_memory.checkpoint`).

Invariant: a cancelled caller does not cancel a unit on a database thread: it still
commits, and only its result is lost.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event, pool
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import OperationalError

from beamclaw_memory.checkpoint import WalCheckpointer
from beamclaw_memory.json_columns import JSON_COLUMNS
from beamclaw_memory.unit import Elsewhere, Unit, attempt_inline, locked, run_unit

READ_THREADS = 2
"""SQLite reader threads (WAL readers never wait for the writer)."""

BUSY_TIMEOUT_MS = 10_000
"""How long a write on the writer thread waits for another process's lock."""

JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024
"""Bytes of write-ahead log kept on disk when the log starts over (SQLite's
``journal_size_limit``): room for a few checkpoint intervals of writes, no more."""

T = TypeVar("T")
Work = Callable[[Unit], T]


class SqliteEngine:
    """The SQLite file (or private in-memory database) and its connections and threads."""

    def __init__(
        self, url: str, *, echo: bool = False, busy_timeout_ms: int = BUSY_TIMEOUT_MS
    ) -> None:
        path = make_url(url).database
        in_memory = not path or path == ":memory:" or "mode=memory" in url
        self.queued_writes = 0
        """Writes whose inline attempt found the database locked (they went to the
        writer thread's queue)."""
        self.failed_fast = 0
        """Queued writes that failed on the lock without waiting (another timed out on it
        while they were queued)."""
        self._lock_timeouts = 0
        """Writes that gave up on a lock, so far (a write queued before the latest one
        does not wait again)."""
        self.checkpointer: WalCheckpointer | None = None
        """File databases: the background WAL checkpointer."""
        self._inline: _HeldConnections | None = None
        if not in_memory:
            assert path is not None
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # One connection for the one writer thread; a private in-memory database has
        # only that connection, so its reads go to the writer too.
        sizes: dict[str, Any] = {} if in_memory else {"pool_size": 1, "max_overflow": 0}
        self._writer = _HeldConnections(
            url,
            "BEGIN IMMEDIATE",
            busy_timeout_ms=busy_timeout_ms,
            echo=echo,
            poolclass=pool.StaticPool if in_memory else pool.QueuePool,
            **sizes,
        )
        self._write_thread = ThreadPoolExecutor(1, thread_name_prefix="db-write")
        if in_memory:
            self._reader, self._read_threads = self._writer, self._write_thread
            return
        assert path is not None
        self.checkpointer = WalCheckpointer(path)
        self._inline = _HeldConnections(
            url, "BEGIN IMMEDIATE", wait=False, echo=echo, pool_size=1, max_overflow=0
        )
        self._reader = _HeldConnections(
            url,
            "BEGIN",
            busy_timeout_ms=busy_timeout_ms,
            echo=echo,
            pool_size=READ_THREADS,
            max_overflow=0,
        )
        self._read_threads = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="db-read")

    async def read(self, work: Work[T]) -> T:
        if self._inline is not None:
            result = self._inline.attempt(work, begin="BEGIN", read_only=True)
            if not isinstance(result, Elsewhere):
                return result
        return await _on(self._read_threads, partial(self._reader.run, work))

    async def write(self, work: Work[T]) -> T:
        try:
            if self._inline is not None:
                result = self._inline.attempt(work)
                if not isinstance(result, Elsewhere):
                    return result
                self.queued_writes += result.locked
            queued = partial(self._queued_write, work, self._lock_timeouts)
            return await _on(self._write_thread, queued)
        finally:
            if self.checkpointer is not None:
                self.checkpointer.wrote()

    def _queued_write(self, work: Work[T], timeouts_when_queued: int) -> T:
        """``work`` on the writer thread: waiting for a lock, unless a write gave up on
        it while this one was queued (then one attempt, no wait)."""
        wait = timeouts_when_queued == self._lock_timeouts
        try:
            return self._writer.run(work, wait=wait)
        except OperationalError as exc:
            if locked(exc.orig):
                self._lock_timeouts += 1
                self.failed_fast += not wait
            raise

    async def dispose(self) -> None:
        if self._inline is not None:
            self._inline.close()
        for connections, threads in (
            (self._reader, self._read_threads),
            (self._writer, self._write_thread),
        ):
            await asyncio.to_thread(threads.shutdown)  # lets running units finish
            connections.close()
        if self.checkpointer is not None:
            checkpointer, self.checkpointer = self.checkpointer, None
            await asyncio.to_thread(checkpointer.close)


async def _on(threads: ThreadPoolExecutor, work: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(threads, work)


class _HeldConnections:
    """One connection per thread, opened on first use and kept open; closed by
    :meth:`close` (SQLite connections may be closed from any thread).

    ``begin`` opens every transaction on these connections: the unit's, and SQLAlchemy's
    when a unit's raw connection begins one itself (Alembic)."""

    def __init__(
        self,
        url: str,
        begin: str,
        *,
        wait: bool = True,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        **engine_args: Any,
    ) -> None:
        self.engine = _sqlite_engine(
            url, begin, busy_timeout_ms=busy_timeout_ms if wait else 0, **engine_args
        )
        self._busy_timeout_ms = busy_timeout_ms if wait else 0
        self._begin = begin
        self._local = threading.local()
        self._opened: list[Connection] = []
        self._lock = threading.Lock()

    def _held(self) -> tuple[Connection, sqlite3.Connection]:
        held: tuple[Connection, sqlite3.Connection] | None = getattr(self._local, "held", None)
        if held is None or held[0].closed:
            conn = self.engine.connect()
            held = (conn, _driver(conn))
            self._local.held = held
            with self._lock:
                self._opened.append(conn)
        return held

    def run(self, work: Work[T], *, wait: bool = True) -> T:
        """``work`` in one unit on this thread's connection (without ``wait``: failing at
        once on a lock another connection holds)."""
        conn, driver = self._held()
        if wait or not self._busy_timeout_ms:
            return run_unit(work, Unit(conn, driver, begin=self._begin))
        driver.execute("PRAGMA busy_timeout=0")
        try:
            return run_unit(work, Unit(conn, driver, begin=self._begin))
        finally:
            driver.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")

    def attempt(
        self, work: Work[T], *, begin: str | None = None, read_only: bool = False
    ) -> T | Elsewhere:
        """``work`` inline, in one unit on this (the event loop's) connection, or
        :class:`Elsewhere` when the attempt ended. ``begin`` replaces the connections'
        own opening statement (``BEGIN`` for a read)."""
        try:
            conn, driver = self._held()
        except OperationalError as exc:
            if locked(exc.orig):  # connecting sets up WAL, which a lock may refuse
                return Elsewhere(locked=True)
            raise
        unit = Unit(conn, driver, begin=begin or self._begin, inline=True, read_only=read_only)
        return attempt_inline(work, unit)

    def close(self) -> None:
        """Close every held connection and the engine's pool (idempotent)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self.engine.dispose()


def _driver(conn: Connection) -> sqlite3.Connection:
    """The ``sqlite3`` connection under ``conn`` (SQLAlchemy's public
    ``PoolProxiedConnection.driver_connection``)."""
    driver = conn.connection.driver_connection
    assert isinstance(driver, sqlite3.Connection)
    return driver


def _sqlite_engine(url: str, begin: str, *, busy_timeout_ms: int, **kwargs: Any) -> Engine:
    engine = create_engine(url, **JSON_COLUMNS, **kwargs)
    event.listen(engine, "connect", _pragmas)
    event.listen(engine, "connect", partial(_busy_timeout, busy_timeout_ms))
    event.listen(engine, "begin", _begin_on_driver(begin))
    return engine


def _pragmas(dbapi_connection: Any, _record: Any) -> None:
    # The driver's own transaction handling never wraps DDL in a transaction, so a
    # migration killed half-way would leave tables without their alembic_version row.
    # Units begin every transaction themselves (Unit._enter; _begin_on_driver for
    # SQLAlchemy's), so every transaction, DDL included, is atomic.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run off the writer: WalCheckpointer
    # a log the checkpointer rewinds is trimmed to this (else a burst's size stays on disk)
    cursor.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT}")
    cursor.close()


def _busy_timeout(milliseconds: int, dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute(f"PRAGMA busy_timeout={milliseconds}")


def _begin_on_driver(statement: str) -> Callable[[Connection], None]:
    def begin(connection: Connection) -> None:
        # SQLAlchemy's autobegin inside a unit joins the transaction the unit began on
        # the driver; only a transaction SQLAlchemy starts itself (after Alembic
        # committed) issues the connections' BEGIN here
        driver = _driver(connection)
        if not driver.in_transaction:
            driver.execute(statement)

    return begin
