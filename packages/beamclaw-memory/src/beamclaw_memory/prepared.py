"""Statements compiled once and, on SQLite, run on the driver directly.

SQLAlchemy's execution layer (cache lookup, execution context, result metadata) costs
40-60 µs per statement on the development machine, ten times what SQLite takes to run a
keyed insert; a turn's few hot statements paid it on the critical path. A
:class:`Prepared` statement is compiled for SQLite the first time it runs and then goes
straight to ``sqlite3`` inside the unit of work's transaction, converting values with the
bind and result processors SQLAlchemy itself would use for each parameter's and column's
type. On any other dialect it is an ordinary ``Connection.execute``.

Restrictions (checked when compiling): no expanding (``IN``) parameters and no Python-side
column defaults — both need SQLAlchemy's execution step.

Errors are SQLAlchemy's on every dialect: a driver error on the direct path is raised as
the :class:`~sqlalchemy.exc.DBAPIError` subclass SQLAlchemy would raise for it (an
``IntegrityError`` for a unique-key violation), with the driver's error as ``orig``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class _Plan:
    sql: str
    slots: tuple[tuple[str, Any, Processor], ...]
    """Each ``?`` in order: parameter name, its own value (a literal such as
    ``kind != 'message'`` or ``LIMIT 1``, used when the caller gives none), converter."""
    results: tuple[Processor, ...]


class Prepared:
    """One hot statement of a store (built once, at import)."""

    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._sqlite: _Plan | None = None

    def rows(self, conn: Connection, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows a SELECT returns, as tuples in column order."""
        plan = self._plan(conn)
        if plan is None:
            return [tuple(r) for r in conn.execute(self.statement, dict(params))]
        values = _values(plan, params)
        try:
            rows = _driver(conn).execute(plan.sql, values).fetchall()
        except sqlite3.Error as exc:
            raise _translated(exc, plan.sql, values) from exc
        if not any(plan.results):
            return rows
        return [
            tuple(v if p is None else p(v) for v, p in zip(row, plan.results, strict=True))
            for row in rows
        ]

    def run(self, conn: Connection, params: Mapping[str, Any]) -> int:
        """Execute once; the number of rows it changed."""
        plan = self._plan(conn)
        if plan is None:
            return int(conn.execute(self.statement, dict(params)).rowcount)
        values = _values(plan, params)
        try:
            return int(_driver(conn).execute(plan.sql, values).rowcount)
        except sqlite3.Error as exc:
            raise _translated(exc, plan.sql, values) from exc

    def run_many(self, conn: Connection, params: Sequence[Mapping[str, Any]]) -> None:
        """Execute once per parameter set (an INSERT of several rows)."""
        plan = self._plan(conn)
        if plan is None:
            conn.execute(self.statement, [dict(p) for p in params])
            return
        many = [_values(plan, p) for p in params]
        try:
            _driver(conn).executemany(plan.sql, many)
        except sqlite3.Error as exc:
            raise _translated(exc, plan.sql, many) from exc

    def _plan(self, conn: Connection) -> _Plan | None:
        dialect = conn.dialect
        if dialect.name != "sqlite":
            return None
        plan = self._sqlite
        if plan is None:
            assert isinstance(self.statement, ClauseElement)
            compiled = self.statement.compile(dialect=dialect)
            assert isinstance(compiled, SQLCompiler)
            binds = compiled.binds
            if any(b.expanding for b in binds.values()):
                raise ValueError("a Prepared statement cannot have expanding parameters")
            table = getattr(self.statement, "table", None)
            columns: Sequence[Column[Any]] = getattr(table, "columns", ())
            if any(c.default is not None for c in columns):
                raise ValueError("a Prepared statement cannot rely on column defaults")
            names = tuple(compiled.positiontup or ())
            selected = getattr(self.statement, "selected_columns", ())
            plan = _Plan(
                sql=compiled.string,
                slots=tuple(
                    (n, binds[n].effective_value, binds[n].type.bind_processor(dialect))
                    for n in names
                ),
                results=tuple(c.type.result_processor(dialect, None) for c in selected),
            )
            self._sqlite = plan
        return plan


def _translated(exc: sqlite3.Error, sql: str, params: Any) -> BaseException:
    """SQLAlchemy's exception for a driver error (as its execution step would raise it)."""
    return DBAPIError.instance(sql, params, exc, sqlite3.Error)


def _driver(conn: Connection) -> Any:
    return conn.connection.driver_connection


def _values(plan: _Plan, params: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    for name, default, convert in plan.slots:
        value = params.get(name, default)
        out.append(value if convert is None else convert(value))
    return out
