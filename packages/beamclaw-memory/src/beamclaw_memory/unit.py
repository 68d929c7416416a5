"""A unit of work: one transaction, and the only way stores speak to the database.

A store hands :meth:`~beamclaw_memory.Database.read` or
:meth:`~beamclaw_memory.Database.write` a plain synchronous function of one :class:`Unit`.
It runs inside one transaction — committed when it returns, rolled back when it raises —
and never awaits, so no other work on the event loop interleaves with the transaction it
holds.

Invariants:

* Statements run through the unit: :class:`~beamclaw_memory.Prepared` hot statements
  (:meth:`Unit.rows`, :meth:`Unit.run`, :meth:`Unit.run_many`) or any other SQLAlchemy
  statement (:meth:`Unit.execute`). :attr:`Unit.connection` is the raw connection for
  what needs one (Alembic, ``inspect``, ``create_all``); it must not end the transaction.
* The engine, not the caller, decides where a unit runs. On a SQLite file a unit first
  runs on the event loop's own connection, its transaction beginning at its first
  statement; a statement that is not prepared (or a reach for the raw connection), or a
  database locked by another writer, ends that attempt (rolled back)
  and the engine runs the unit again on a database thread. So a unit may start more than
  once — its Python side effects must be repeatable — and at most one run commits.
* A unit is usable only while its transaction is open (:class:`UnitClosedError`); a unit
  started from inside another's work is refused (:class:`NestedUnitError`); work that
  returns an awaitable (an ``async def``) is refused and nothing is committed.
* Errors are SQLAlchemy's whichever way a statement ran: a driver error on the direct
  ``sqlite3`` path is raised as the :class:`~sqlalchemy.exc.DBAPIError` subclass
  SQLAlchemy would raise (an ``IntegrityError`` for a unique-key violation).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.engine import Connection, CursorResult
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Executable

from beamclaw_memory.errors import NestedUnitError, UnitClosedError, UnitOfWorkError
from beamclaw_memory.prepared import Prepared

T = TypeVar("T")

_NO_PARAMS: Mapping[str, Any] = {}
_LOCKED = ("SQLITE_BUSY", "SQLITE_LOCKED")
_running: ContextVar[bool] = ContextVar("beamclaw_unit_running", default=False)


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """What an inline attempt that ended (rolled back) returns: run the unit on a
    database thread."""

    locked: bool
    """The database was locked (else: the unit ran something but a prepared statement)."""


class _Elsewhere(BaseException):
    """Ends an inline attempt from inside its work; :func:`attempt_inline` turns it into
    :class:`Elsewhere`. A ``BaseException``: work that catches ``Exception`` does not
    swallow it."""

    def __init__(self, locked: bool) -> None:
        self.locked = locked
        super().__init__("locked" if locked else "not prepared")


class Unit:
    """One unit of work's transaction (see the module)."""

    __slots__ = ("_begin", "_conn", "_driver", "_inline", "_open", "_read_only", "dialect")

    def __init__(
        self,
        connection: Connection,
        driver: sqlite3.Connection | None = None,
        *,
        begin: str = "BEGIN",
        inline: bool = False,
        read_only: bool = False,
    ) -> None:
        """``driver``: the SQLite connection under ``connection``, whose transaction the
        unit begins (with ``begin``) and ends itself; None where SQLAlchemy's transaction
        is the unit's (PostgreSQL). ``inline``: the attempt on the event loop's connection.
        """
        self._conn = connection
        self._driver = driver
        self._begin = begin
        self._inline = inline
        self._read_only = read_only
        self._open = True
        self.dialect: str = connection.dialect.name
        """``sqlite`` or ``postgresql``."""

    def rows(
        self, statement: Prepared, params: Mapping[str, Any] = _NO_PARAMS
    ) -> list[tuple[Any, ...]]:
        """The rows a prepared SELECT returns, as tuples in column order."""
        driver = self._enter(hot=True)
        if driver is None:
            result = self._conn.execute(statement.statement(self.dialect), dict(params))
            return [tuple(r) for r in result]
        plan = statement.driver_plan(self._conn.dialect)
        values = plan.values(params)
        try:
            return plan.converted(driver.execute(plan.sql, values).fetchall())
        except sqlite3.Error as exc:
            raise self._failed(exc, plan.sql, values) from exc

    def run(self, statement: Prepared, params: Mapping[str, Any] = _NO_PARAMS) -> int:
        """Execute a prepared statement once; the number of rows it changed."""
        driver = self._enter(hot=True)
        if driver is None:
            return int(self._conn.execute(statement.statement(self.dialect), dict(params)).rowcount)
        plan = statement.driver_plan(self._conn.dialect)
        values = plan.values(params)
        try:
            return int(driver.execute(plan.sql, values).rowcount)
        except sqlite3.Error as exc:
            raise self._failed(exc, plan.sql, values) from exc

    def run_many(self, statement: Prepared, params: Sequence[Mapping[str, Any]]) -> None:
        """Execute a prepared statement once per parameter set (an INSERT of rows)."""
        driver = self._enter(hot=True)
        if driver is None:
            self._conn.execute(statement.statement(self.dialect), [dict(p) for p in params])
            return
        plan = statement.driver_plan(self._conn.dialect)
        many = [plan.values(p) for p in params]
        try:
            driver.executemany(plan.sql, many)
        except sqlite3.Error as exc:
            raise self._failed(exc, plan.sql, many) from exc

    def execute(
        self,
        statement: Executable,
        params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    ) -> CursorResult[*tuple[Any, ...]]:
        """Any SQLAlchemy statement, through SQLAlchemy (it joins the unit's transaction)."""
        self._enter(hot=False)
        if params is None:
            return self._conn.execute(statement)
        if isinstance(params, Mapping):
            return self._conn.execute(statement, dict(params))
        return self._conn.execute(statement, [dict(p) for p in params])

    @property
    def connection(self) -> Connection:
        """The raw connection, inside the unit's transaction (which it must not end)."""
        self._enter(hot=False)
        return self._conn

    def _enter(self, *, hot: bool) -> sqlite3.Connection | None:
        """Check the unit may run a statement here; begin its transaction if not yet."""
        if not self._open:
            raise UnitClosedError("this unit of work's transaction has ended")
        if self._inline and not hot:
            raise _Elsewhere(locked=False)
        driver = self._driver
        if driver is not None and not driver.in_transaction:
            try:
                driver.execute(self._begin)
            except sqlite3.Error as exc:
                raise self._failed(exc, self._begin, ()) from exc
        return driver

    def _failed(self, exc: sqlite3.Error, sql: str, params: Any) -> BaseException:
        """What to raise for a driver error: on the inline attempt, a locked database
        sends the unit elsewhere when nothing of it is done yet, or whenever it only
        reads; otherwise SQLAlchemy's exception for it."""
        nothing_done = self._driver is None or not self._driver.in_transaction
        if self._inline and locked(exc) and (self._read_only or nothing_done):
            return _Elsewhere(locked=True)
        return translated(exc, sql, params)

    def end(self, *, commit: bool) -> None:
        """Commit or roll back what the unit began, and close it (engine use)."""
        self._open = False
        driver = self._driver
        if driver is None:  # SQLAlchemy's transaction: the engine ends it
            return
        conn = self._conn
        if not commit:
            if conn.in_transaction():
                conn.rollback()
            elif driver.in_transaction:
                driver.rollback()
            return
        try:
            if conn.in_transaction():
                conn.commit()
            elif driver.in_transaction:
                driver.commit()
        except sqlite3.Error as exc:
            self.end(commit=False)
            raise translated(exc, "COMMIT", ()) from exc
        except BaseException:
            self.end(commit=False)
            raise


def translated(exc: sqlite3.Error, sql: str, params: Any) -> BaseException:
    """SQLAlchemy's exception for a driver error, as its execution step would raise it.

    ``DBAPIError.instance`` is the classmethod SQLAlchemy's own execution step calls; it is
    the one place outside the documented API this package uses, isolated here: raising
    the same exception tree on both paths lets callers catch one (``IntegrityError``)."""
    return DBAPIError.instance(sql, params, exc, sqlite3.Error)


def locked(exc: BaseException | None) -> bool:
    """Whether a ``sqlite3`` error says the database is locked by another connection."""
    return getattr(exc, "sqlite_errorname", "") in _LOCKED


def refuse_nested() -> None:
    """Raise :class:`NestedUnitError` when called from inside a unit's work."""
    if _running.get():
        raise NestedUnitError(
            "a unit of work started another: do all of it in one unit (one transaction)"
        )


def attempt_inline(work: Callable[[Unit], T], unit: Unit) -> T | Elsewhere:
    """:func:`run_unit` for an inline ``unit``: its result, or :class:`Elsewhere` when the
    attempt ended (rolled back) and the unit is to run on a database thread."""
    try:
        return run_unit(work, unit)
    except _Elsewhere as elsewhere:
        return Elsewhere(elsewhere.locked)


def run_unit(work: Callable[[Unit], T], unit: Unit) -> T:
    """Run ``work`` in ``unit``: committed when it returns, rolled back when it raises."""
    token = _running.set(True)
    try:
        try:
            result = work(unit)
        except BaseException:
            unit.end(commit=False)
            raise
        if hasattr(result, "__await__"):  # ~20 ns; inspect.isawaitable costs ~0.7 µs
            close = getattr(result, "close", None)
            if close is not None:
                close()  # the coroutine never ran: no "never awaited" warning
            unit.end(commit=False)
            raise UnitOfWorkError(
                "a unit of work is a plain function and never awaits; "
                "it returned an awaitable (an async function?), nothing was committed"
            )
        unit.end(commit=True)
        return result
    finally:
        _running.reset(token)
