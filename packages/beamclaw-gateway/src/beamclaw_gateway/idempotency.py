"""``Idempotency-Key``: a retried request returns the first answer without a second turn.

Keys are scoped by the presented token (hashed) and persisted in ``gateway_idempotency``,
so a retry after a gateway restart is answered from the database. A key reused with a
different request body is a 409; a retry that arrives while the first request still runs
waits for its answer (same node) or gets a 409 (the first runs on another node).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from beamclaw_gateway.tables import idempotency
from beamclaw_memory import Database

IN_PROGRESS = "in_progress"
DONE = "done"


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """A finished request's answer: status code and JSON body."""

    status_code: int
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of :meth:`IdempotencyStore.claim`."""

    kind: Literal["new", "replay", "mismatch", "busy"]
    answer: StoredAnswer | None = None


def fingerprint(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class IdempotencyStore:
    """Idempotency records over the shared database, plus same-node waiters."""

    def __init__(self, database: Database, ttl_seconds: float) -> None:
        self.db = database
        self.ttl = ttl_seconds
        self._waiters: dict[str, asyncio.Future[StoredAnswer]] = {}

    async def claim(self, key: str, print_: str, *, wait: float = 900.0) -> Claim:
        """Start the request for ``key`` (``new``) or get what an earlier one left."""
        now = time.time()
        row = await self.db.write(partial(self._claim, key=key, print_=print_, now=now))
        if row is None:
            self._waiters[key] = asyncio.get_running_loop().create_future()
            return Claim("new")
        m = row._mapping  # pyright: ignore[reportPrivateUsage]
        if m["fingerprint"] != print_:
            return Claim("mismatch")
        if m["state"] == DONE:
            return Claim("replay", StoredAnswer(int(m["status_code"]), dict(m["response"])))
        waiter = self._waiters.get(key)
        if waiter is None:
            return Claim("busy")
        await asyncio.wait({waiter}, timeout=wait)
        if not waiter.done() or waiter.cancelled():
            return Claim("busy")
        return Claim("replay", waiter.result())

    def _claim(self, conn: Connection, *, key: str, print_: str, now: float) -> sa.Row[Any] | None:
        """Drop expired keys and insert ``key``: None when inserted, else the existing row."""
        conn.execute(idempotency.delete().where(idempotency.c.expires_at < now))
        insert = postgresql.insert if self.db.dialect == "postgresql" else sqlite.insert
        inserted = conn.execute(
            insert(idempotency)
            .values(
                key=key,
                fingerprint=print_,
                state=IN_PROGRESS,
                created_at=now,
                expires_at=now + self.ttl,
            )
            .on_conflict_do_nothing(index_elements=["key"])
        )
        if inserted.rowcount == 1:
            return None
        return conn.execute(sa.select(idempotency).where(idempotency.c.key == key)).one()

    async def finish(self, key: str, answer: StoredAnswer, session_id: str | None) -> None:
        """Store the answer and wake same-node waiters."""
        stmt = (
            idempotency.update()
            .where(idempotency.c.key == key)
            .values(
                state=DONE,
                status_code=answer.status_code,
                response=answer.body,
                session_id=session_id,
            )
        )
        await self.db.write(lambda conn: conn.execute(stmt))
        waiter = self._waiters.pop(key, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)

    async def abandon(self, key: str) -> None:
        """Forget an in-progress key whose request never started a turn."""
        stmt = idempotency.delete().where(idempotency.c.key == key)
        await self.db.write(lambda conn: conn.execute(stmt))
        waiter = self._waiters.pop(key, None)
        if waiter is not None and not waiter.done():
            waiter.cancel()
