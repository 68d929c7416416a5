"""The outbox of jobs' answers (``scheduler_deliveries``): each answer delivered at least
once, every try with the same delivery id.

Invariants:

* A fire's row is written ``awaiting`` *before* its turn is sent, with the session and
  the turn's ``source_message_id`` (:func:`turn_ref`): a crash at any later point leaves
  a row from which a restart finds the committed answer, so no answer is lost.
* ``awaiting`` → ``pending`` (the answer is in ``text``) or ``skipped`` (the turn
  committed no answer: nothing to send); ``pending`` → ``sent`` once a channel took it,
  or ``failed`` after :data:`MAX_ATTEMPTS` tries spaced by :func:`backoff`. Only the
  first transition out of a state counts (each update names the state it leaves).
* ``key`` (``<job>:<fire>``) is the delivery id: a kill between a channel taking the
  answer and ``sent`` being stored repeats that one delivery with the same id, which
  the receiver can drop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from beamclaw_memory import Database, Unit
from beamclaw_scheduler.tables import deliveries

DeliveryState = Literal["awaiting", "pending", "sent", "failed", "skipped"]
MAX_ATTEMPTS = 8
"""Tries of one delivery before it is marked ``failed`` (about 10 minutes of backoff)."""
FIRST_RETRY_SECONDS = 5.0
MAX_RETRY_SECONDS = 600.0
KEEP_SECONDS = 7 * 86_400.0
"""How long ``sent``, ``failed`` and ``skipped`` rows are kept."""


def delivery_key(job_id: str, fire_count: int) -> str:
    """The delivery id of fire ``fire_count`` of job ``job_id``."""
    return f"{job_id}:{fire_count}"


def turn_ref(key: str) -> str:
    """The ``source_message_id`` of the turn whose answer delivery ``key`` sends."""
    return f"job:{key}"


def backoff(attempts: int) -> float:
    """Seconds before the next try after ``attempts`` failed ones (≥ 1): doubling from
    :data:`FIRST_RETRY_SECONDS`, at most :data:`MAX_RETRY_SECONDS`."""
    return min(MAX_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2.0 ** max(0, attempts - 1))


@dataclass(frozen=True, slots=True)
class Delivery:
    """One row of the outbox."""

    key: str
    job_id: str
    deliver_to: str
    person: str
    session_id: str
    text: str | None
    state: DeliveryState
    attempts: int
    next_attempt_at: float
    last_error: str | None
    created_at: float

    @property
    def ref(self) -> str:
        return turn_ref(self.key)


def _delivery(row: Any) -> Delivery:
    return Delivery(
        row.key,
        row.job_id,
        row.deliver_to,
        row.person,
        row.session_id,
        row.text,
        row.state,
        row.attempts,
        row.next_attempt_at,
        row.last_error,
        row.created_at,
    )


class DeliveryOutbox:
    """``scheduler_deliveries`` (see the module invariants); each method is one unit."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self.db = database
        self._clock = clock

    async def expect(
        self, key: str, *, job_id: str, deliver_to: str, person: str, session_id: str
    ) -> None:
        """Record that fire ``key`` will have an answer to deliver (nothing if recorded)."""
        now = self._clock()

        def work(unit: Unit) -> None:
            found = unit.execute(sa.select(deliveries.c.key).where(deliveries.c.key == key)).first()
            if found is None:
                unit.execute(
                    deliveries.insert().values(
                        key=key,
                        job_id=job_id,
                        deliver_to=deliver_to,
                        person=person,
                        session_id=session_id,
                        ref=turn_ref(key),
                        text=None,
                        state="awaiting",
                        attempts=0,
                        next_attempt_at=now,
                        last_error=None,
                        created_at=now,
                        updated_at=now,
                    )
                )

        await self.db.write(work)

    async def ready(self, key: str, text: str) -> bool:
        """``awaiting`` → ``pending`` with the answer; False when it had left ``awaiting``."""
        return await self._move(key, "awaiting", state="pending", text=text)

    async def skip(self, key: str, reason: str) -> bool:
        """``awaiting`` → ``skipped``: the turn committed no answer."""
        return await self._move(key, "awaiting", state="skipped", last_error=reason)

    async def sent(self, key: str) -> bool:
        return await self._move(key, "pending", state="sent", last_error=None)

    async def failed_attempt(self, key: str, error: str, attempts: int) -> DeliveryState:
        """Count a failed try (``attempts`` in all): ``pending`` again after
        :func:`backoff`, or ``failed`` from :data:`MAX_ATTEMPTS` on."""
        if attempts >= MAX_ATTEMPTS:
            await self._move(key, "pending", state="failed", attempts=attempts, last_error=error)
            return "failed"
        await self._move(
            key,
            "pending",
            attempts=attempts,
            last_error=error,
            next_attempt_at=self._clock() + backoff(attempts),
        )
        return "pending"

    async def give_up(self, key: str, error: str) -> bool:
        """``pending`` → ``failed`` at once (the target can never take it)."""
        return await self._move(key, "pending", state="failed", last_error=error)

    async def get(self, key: str) -> Delivery | None:
        def work(unit: Unit) -> Delivery | None:
            row = unit.execute(sa.select(deliveries).where(deliveries.c.key == key)).first()
            return None if row is None else _delivery(row)

        return await self.db.read(work)

    async def in_state(
        self, state: DeliveryState, *, due_by: float | None = None
    ) -> list[Delivery]:
        """Rows in ``state`` (due by ``due_by`` when given), oldest first."""

        def work(unit: Unit) -> list[Delivery]:
            query = sa.select(deliveries).where(deliveries.c.state == state)
            if due_by is not None:
                query = query.where(deliveries.c.next_attempt_at <= due_by)
            rows = unit.execute(query.order_by(deliveries.c.created_at, deliveries.c.key))
            return [_delivery(r) for r in rows]

        return await self.db.read(work)

    async def prune(self, keep_seconds: float = KEEP_SECONDS) -> int:
        """Forget finished rows older than ``keep_seconds``; how many."""
        before = self._clock() - keep_seconds

        def work(unit: Unit) -> int:
            gone = unit.execute(
                sa.delete(deliveries).where(
                    deliveries.c.state.in_(("sent", "failed", "skipped")),
                    deliveries.c.updated_at < before,
                )
            )
            return int(gone.rowcount)

        return await self.db.write(work)

    async def _move(self, key: str, leaving: DeliveryState, **values: Any) -> bool:
        values["updated_at"] = self._clock()

        def work(unit: Unit) -> bool:
            moved = unit.execute(
                sa.update(deliveries)
                .where(deliveries.c.key == key, deliveries.c.state == leaving)
                .values(**values)
            )
            return moved.rowcount == 1

        return await self.db.write(work)
