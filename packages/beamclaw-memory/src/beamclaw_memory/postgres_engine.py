"""PostgreSQL behind :class:`~beamclaw_memory.Database`: units of work on the async driver.

A unit runs through the async engine's ``run_sync`` on a pooled asyncpg connection: its
statements' I/O is awaited on the event loop (SQLAlchemy's greenlet bridge), never on a
thread. A write unit runs in ``engine.begin()`` (committed when it returns, rolled back
when it raises); a read unit in a transaction that is rolled back at its end.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from beamclaw_memory.json_columns import JSON_COLUMNS
from beamclaw_memory.unit import Unit, run_unit

T = TypeVar("T")
Work = Callable[[Unit], T]


class PostgresEngine:
    """The async engine and its pool."""

    queued_writes = 0
    """Always 0: no write waits for an inline attempt here."""
    failed_fast = 0
    """Always 0: a lock wait is the server's (``lock_timeout``), per statement."""
    checkpointer = None

    def __init__(self, url: str, *, echo: bool = False, pool_size: int = 10) -> None:
        self._async = create_async_engine(
            url,
            **JSON_COLUMNS,
            echo=echo,
            pool_pre_ping=True,
            pool_size=pool_size,
            max_overflow=pool_size,
        )

    async def read(self, work: Work[T]) -> T:
        async with self._async.connect() as conn:
            return await conn.run_sync(partial(_in_unit, work))

    async def write(self, work: Work[T]) -> T:
        async with self._async.begin() as conn:
            return await conn.run_sync(partial(_in_unit, work))

    async def dispose(self) -> None:
        await self._async.dispose()


def _in_unit(work: Work[T], connection: Connection) -> T:
    return run_unit(work, Unit(connection))
