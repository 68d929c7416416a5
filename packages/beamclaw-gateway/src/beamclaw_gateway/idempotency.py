"""``Idempotency-Key``: a retried request returns the first answer without a second turn.

Keys are scoped by the presented token (hashed) and persisted in ``gateway_idempotency``,
so a retry after a gateway restart is answered from the database. A key reused with a
different request body is a 409; a retry that arrives while the first request still runs
waits for its answer (same instance) or gets a 409 (the first runs on another instance).

Ownership: each store is one gateway instance (a random id per started gateway). An
``in_progress`` row names its owner and the owner's lease; a live owner refreshes the
leases of what it owns every third of ``lease_seconds``. A row whose lease lapsed and
that this instance is not running belongs to a dead process (or to no one): the
start-up sweep and any claim of that key take it over (one compare-and-set, so one
instance wins) and settle it: the answer the conversation store holds for its turn becomes the stored answer
(replayed); a turn still queued or running (a restart resumes queued messages) keeps
the key busy until it ends; else the key is released (the retry runs the turn afresh).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import sqlalchemy as sa
from loguru import logger

from beamclaw_gateway.tables import idempotency
from beamclaw_memory import Database, Unit
from beamclaw_memory.dialect import dialect_insert

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


@dataclass(frozen=True, slots=True)
class Orphan:
    """An ``in_progress`` key whose owner died: what settling it needs."""

    key: str
    session_id: str | None
    turn_id: str | None
    model: str | None
    created_at: float


RUNNING: Literal["running"] = "running"

Settlement = StoredAnswer | Literal["running"] | None
Settle = Callable[[Orphan], Awaitable[Settlement]]
"""The committed answer of an orphan's turn; None when the turn never committed one and
never will (release the key); :data:`RUNNING` while its message is still queued or its
turn still runs here (the key stays taken until that settles, and is looked at again)."""


def fingerprint(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def scoped_key(token_key: str | None, key: str) -> str:
    """The stored key: the client's ``Idempotency-Key`` under its token's hash."""
    return f"{token_key or 'anon'}:{key}"


def turn_ref(key: str) -> str:
    """The ``source_message_id`` of the turn a key runs: it marks the user message in the
    conversation store, so a dead owner's turn is found even before its id was stored."""
    return "idempotency-" + hashlib.sha256(key.encode()).hexdigest()[:32]


async def _nothing_committed(_orphan: Orphan) -> Settlement:
    return None


class IdempotencyStore:
    """Idempotency records over the shared database, plus same-instance waiters.

    ``clock`` (epoch seconds) and ``instance`` are seams: a test writes through a second
    store as another, dead or live, gateway would."""

    def __init__(
        self,
        database: Database,
        ttl_seconds: float,
        *,
        lease_seconds: float = 15.0,
        settle: Settle = _nothing_committed,
        instance: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = database
        self.ttl = ttl_seconds
        self.lease = lease_seconds
        self.instance = instance or uuid.uuid4().hex
        self._settle = settle
        self._clock = clock
        self._waiters: dict[str, asyncio.Future[StoredAnswer]] = {}
        self._heartbeat: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ requests

    async def claim(
        self,
        key: str,
        print_: str,
        *,
        session_id: str | None = None,
        model: str | None = None,
        wait: float = 900.0,
    ) -> Claim:
        """Start the request for ``key`` (``new``) or get what an earlier one left."""
        now = self._clock()
        fields = {"key": key, "print_": print_, "now": now, "session_id": session_id}
        row = await self.db.write(partial(self._claim, model=model, **fields))
        if row is not None and self._orphaned(row, now):
            settled = await self._take_over(row, now)
            again = self._reclaim if settled == "released" else self._claim
            row = await self.db.write(partial(again, model=model, **fields))
        if row is None:
            self._waiters[key] = asyncio.get_running_loop().create_future()
            self._ensure_heartbeat()
            return Claim("new")
        m = _fields(row)
        if m["fingerprint"] != print_:
            return Claim("mismatch")
        if m["state"] == DONE:
            return Claim("replay", StoredAnswer(int(m["status_code"]), dict(m["response"])))
        waiter = self._waiters.get(key)
        if waiter is None:
            # the row was read before its request stored the answer and dropped its waiter
            # (two connections: on PostgreSQL a retry sent as the answer arrived met both)
            row = await self.db.read(partial(_row, key=key))
            if row is not None and _fields(row)["state"] == DONE:
                m = _fields(row)
                return Claim("replay", StoredAnswer(int(m["status_code"]), dict(m["response"])))
            return Claim("busy")
        await asyncio.wait({waiter}, timeout=wait)
        if not waiter.done() or waiter.cancelled():
            return Claim("busy")
        return Claim("replay", waiter.result())

    def _values(
        self, *, key: str, print_: str, now: float, session_id: str | None, model: str | None
    ) -> dict[str, Any]:
        return {
            "key": key,
            "fingerprint": print_,
            "state": IN_PROGRESS,
            "created_at": now,
            "expires_at": now + self.ttl,
            "owner": self.instance,
            "lease_until": now + self.lease,
            "session_id": session_id,
            "turn_id": None,
            "model": model,
        }

    def _claim(self, unit: Unit, *, key: str, print_: str, now: float, **kw: Any) -> Any:
        """Drop expired keys and insert ``key``: None when inserted, else the existing row."""
        unit.execute(idempotency.delete().where(idempotency.c.expires_at < now))
        inserted = unit.execute(
            dialect_insert(self.db.dialect, idempotency)
            .values(self._values(key=key, print_=print_, now=now, **kw))
            .on_conflict_do_nothing(index_elements=["key"])
        )
        if inserted.rowcount == 1:
            return None
        return _row(unit, key=key)

    def _reclaim(self, unit: Unit, *, key: str, now: float, **kw: Any) -> Any:
        """Restart a key this instance took over and released, as :meth:`_claim` answers
        (the key may have been deleted or taken meanwhile)."""
        updated = unit.execute(
            idempotency.update()
            .where(idempotency.c.key == key, idempotency.c.owner == self.instance)
            .where(idempotency.c.state == IN_PROGRESS)
            .values(self._values(key=key, now=now, **kw))
        )
        return None if updated.rowcount == 1 else self._claim(unit, key=key, now=now, **kw)

    async def started(self, key: str, turn_id: str) -> None:
        """Record the turn that answers ``key`` (what settling it looks for)."""
        stmt = (
            idempotency.update()
            .where(idempotency.c.key == key, idempotency.c.state == IN_PROGRESS)
            .values(turn_id=turn_id)
        )
        await self.db.write(lambda unit: unit.execute(stmt))

    async def finish(self, key: str, answer: StoredAnswer, session_id: str | None) -> None:
        """Store the answer and wake same-instance waiters."""
        stmt = (
            idempotency.update()
            .where(idempotency.c.key == key)
            .values(
                state=DONE,
                status_code=answer.status_code,
                response=answer.body,
                session_id=session_id,
                lease_until=None,
            )
        )
        await self.db.write(lambda unit: unit.execute(stmt))
        waiter = self._waiters.pop(key, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)

    async def abandon(self, key: str) -> None:
        """Forget an in-progress key whose request never started a turn."""
        stmt = idempotency.delete().where(idempotency.c.key == key)
        await self.db.write(lambda unit: unit.execute(stmt))
        waiter = self._waiters.pop(key, None)
        if waiter is not None and not waiter.done():
            waiter.cancel()

    # ------------------------------------------------------------ dead owners

    def _orphaned(self, row: Any, now: float) -> bool:
        """In progress, lease lapsed, and not a request this instance is running."""
        m = _fields(row)
        lease = m["lease_until"]
        return (
            m["state"] == IN_PROGRESS
            and (lease is None or lease < now)
            and m["key"] not in self._waiters
        )

    async def _take_over(
        self, row: Any, now: float
    ) -> Literal["answered", "released", "running", "lost"]:
        """Own a dead owner's key (compare-and-set on owner and lease) and settle it.

        ``running``: the key stays this instance's without a refreshed lease, so it is
        busy until the lease lapses and then looked at again."""
        m = _fields(row)
        key: str = m["key"]
        won = await self.db.write(
            partial(
                _compare_and_own,
                key=key,
                owner=m["owner"],
                lease=m["lease_until"],
                instance=self.instance,
                until=now + self.lease,
            )
        )
        if not won:
            return "lost"
        orphan = Orphan(key, m["session_id"], m["turn_id"], m["model"], float(m["created_at"]))
        try:
            answer = await self._settle(orphan)
        except Exception:
            logger.exception("settling idempotency key of a dead gateway failed; releasing it")
            answer = None
        if answer == RUNNING:
            return "running"
        if answer is not None:
            await self.finish(key, answer, orphan.session_id)
            logger.info("idempotency key of a dead gateway settled from its committed turn")
            return "answered"
        return "released"

    async def sweep(self) -> int:
        """Settle every key of a dead owner (start-up): answered from the conversation
        store, else deleted. Returns how many were settled."""
        now = self._clock()
        query = sa.select(idempotency).where(
            idempotency.c.state == IN_PROGRESS,
            idempotency.c.expires_at >= now,
            sa.or_(idempotency.c.lease_until.is_(None), idempotency.c.lease_until < now),
        )
        rows = await self.db.read(lambda unit: list(unit.execute(query).mappings()))
        settled = 0
        for row in rows:
            if not self._orphaned(row, now):
                continue
            outcome = await self._take_over(row, now)
            if outcome == "released":
                await self.db.write(partial(_release, key=_fields(row)["key"], owner=self.instance))
            settled += outcome in ("answered", "released")
        if settled:
            logger.info("settled {} idempotency keys left by a dead gateway", settled)
        return settled

    # ------------------------------------------------------------ leases

    async def refresh_leases(self) -> int:
        """Extend the lease of every key this instance still runs; returns how many."""
        until = self._clock() + self.lease
        stmt = (
            idempotency.update()
            .where(idempotency.c.owner == self.instance, idempotency.c.state == IN_PROGRESS)
            .values(lease_until=until)
        )
        result = await self.db.write(lambda unit: unit.execute(stmt))
        return int(result.rowcount)

    def _ensure_heartbeat(self) -> None:
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._beat(), name="idempotency-leases")

    async def _beat(self) -> None:
        """Refresh leases while this instance owns running keys; ends when it owns none."""
        while self._waiters:
            await asyncio.sleep(self.lease / 3)
            try:
                await self.refresh_leases()
            except Exception:
                logger.exception("refreshing idempotency leases failed")

    def detach(self) -> None:
        """Stop refreshing leases without waiting (the store is being replaced)."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None

    async def close(self) -> None:
        """Stop refreshing leases (what is still running lapses and is settled later)."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None


def _fields(row: Any) -> Mapping[str, Any]:
    """A row as the units here return it (``Result.mappings()``)."""
    mapping: Mapping[str, Any] = row
    return mapping


def _release(unit: Unit, *, key: str, owner: str) -> None:
    unit.execute(
        idempotency.delete().where(
            idempotency.c.key == key,
            idempotency.c.owner == owner,
            idempotency.c.state == IN_PROGRESS,
        )
    )


def _row(unit: Unit, *, key: str) -> Any:
    query = sa.select(idempotency).where(idempotency.c.key == key)
    return unit.execute(query).mappings().one_or_none()


def _compare_and_own(
    unit: Unit,
    *,
    key: str,
    owner: str | None,
    lease: float | None,
    instance: str,
    until: float,
) -> bool:
    owner_is = idempotency.c.owner.is_(None) if owner is None else idempotency.c.owner == owner
    lease_is = (
        idempotency.c.lease_until.is_(None) if lease is None else idempotency.c.lease_until == lease
    )
    updated = unit.execute(
        idempotency.update()
        .where(idempotency.c.key == key, idempotency.c.state == IN_PROGRESS, owner_is, lease_is)
        .values(owner=instance, lease_until=until)
    )
    return updated.rowcount == 1
