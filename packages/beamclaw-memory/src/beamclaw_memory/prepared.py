"""Hot statements, built and compiled once per dialect.

SQLAlchemy's execution layer (cache lookup, execution context, result metadata) costs
40-60 µs per statement on the development machine, ten times what SQLite takes to run a
keyed insert; a turn's few hot statements paid it on the critical path. A
:class:`Prepared` statement is compiled for SQLite the first time a unit of work runs it
(:class:`~beamclaw_memory.Unit`), which then sends it straight to ``sqlite3`` with the
bind and result processors SQLAlchemy itself would use for each parameter's and column's
type. On any other dialect the unit executes the statement through SQLAlchemy.

A statement that differs by dialect (``INSERT … ON CONFLICT`` comes from the dialect's
own ``insert``) is given as a function of the dialect's name and built once per dialect.

Restrictions (checked when compiling): no expanding (``IN``) parameters and no Python-side
column defaults — both need SQLAlchemy's execution step.

Invariant: the compiled plan uses only SQLAlchemy's documented compiler and type API
(``SQLCompiler.binds``/``positiontup``, ``BindParameter.effective_value``,
``TypeEngine.bind_processor``/``result_processor``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class DriverPlan:
    """A statement compiled for a driver that takes ``?`` parameters (``sqlite3``)."""

    sql: str
    slots: tuple[tuple[str, Any, Processor], ...]
    """Each ``?`` in order: parameter name, its own value (a literal such as
    ``kind != 'message'`` or ``LIMIT 1``, used when the caller gives none), converter."""
    results: tuple[Processor, ...]

    def values(self, params: Mapping[str, Any]) -> list[Any]:
        """The driver's parameters for one set of named values."""
        out: list[Any] = []
        for name, default, convert in self.slots:
            value = params.get(name, default)
            out.append(value if convert is None else convert(value))
        return out

    def converted(self, rows: list[Any]) -> list[tuple[Any, ...]]:
        """The driver's rows with SQLAlchemy's result conversions applied."""
        if not any(self.results):
            return rows
        return [
            tuple(v if p is None else p(v) for v, p in zip(row, self.results, strict=True))
            for row in rows
        ]


class Prepared:
    """One hot statement of a store (built once, at import); run it through a unit of
    work: ``unit.rows(STATEMENT, params)``, ``unit.run(...)``, ``unit.run_many(...)``."""

    def __init__(self, statement: Executable | Callable[[str], Executable]) -> None:
        self._build = None if isinstance(statement, Executable) else statement
        self._statements: dict[str, Executable] = (
            {"": statement} if isinstance(statement, Executable) else {}
        )
        self._plans: dict[str, DriverPlan] = {}

    def statement(self, dialect: str) -> Executable:
        """The statement for ``dialect`` (``sqlite``, ``postgresql``)."""
        found = self._statements.get(dialect, self._statements.get(""))
        if found is None:
            assert self._build is not None
            found = self._statements[dialect] = self._build(dialect)
        return found

    def driver_plan(self, dialect: Dialect) -> DriverPlan:
        """The statement compiled for ``dialect``'s driver (once per dialect)."""
        plan = self._plans.get(dialect.name)
        if plan is None:
            plan = self._plans[dialect.name] = _compile(self.statement(dialect.name), dialect)
        return plan


def _compile(statement: Executable, dialect: Dialect) -> DriverPlan:
    assert isinstance(statement, ClauseElement)
    compiled = statement.compile(dialect=dialect)
    assert isinstance(compiled, SQLCompiler)
    binds = compiled.binds
    if any(b.expanding for b in binds.values()):
        raise ValueError("a Prepared statement cannot have expanding parameters")
    table = getattr(statement, "table", None)
    columns: Sequence[Column[Any]] = getattr(table, "columns", ())
    if any(c.default is not None for c in columns):
        raise ValueError("a Prepared statement cannot rely on column defaults")
    names = tuple(compiled.positiontup or ())
    selected = getattr(statement, "selected_columns", ())
    return DriverPlan(
        sql=compiled.string,
        slots=tuple(
            (n, binds[n].effective_value, binds[n].type.bind_processor(dialect)) for n in names
        ),
        results=tuple(c.type.result_processor(dialect, None) for c in selected),
    )
