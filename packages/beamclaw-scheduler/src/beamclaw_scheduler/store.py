"""Jobs in the database (``scheduler_jobs``) and background spend (``scheduler_spend``).

Invariants:

* Every change is one unit of work (one transaction) through :class:`Database`: a kill -9
  loses at most the change in flight, never a job.
* :meth:`JobStore.claim` reads the job and advances ``next_run_at`` in the same
  transaction, and only when the job is still active and still due at the time the
  caller saw: of two runners (or a runner before and after a restart) exactly one claims
  a given due time. A fire is thus recorded *before* it runs — at most once, never twice.
  On PostgreSQL the claim locks the job's row ``FOR UPDATE SKIP LOCKED``: several gateway
  nodes' runners never queue up behind each other on one job.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from beamclaw_memory import Database, Unit
from beamclaw_scheduler.due import Claim, Timing
from beamclaw_scheduler.errors import UnknownJobError
from beamclaw_scheduler.specs import Kind, Spec, kind_of, spec_from_json, spec_to_json
from beamclaw_scheduler.tables import jobs, spend

Status = Literal["active", "paused", "completed", "failed"]
SessionMode = Literal["shared", "isolated"]


@dataclass(frozen=True, slots=True)
class NewJob:
    """A validated job before it is stored."""

    agent_id: str
    user_id: str
    session_mode: SessionMode
    session_id: str | None
    spec: Spec
    prompt: str
    deliver_to: str
    approval_mode: Literal["deny", "wait"]
    max_errors: int
    next_run_at: float


@dataclass(frozen=True, slots=True)
class Job:
    """A stored job."""

    id: str
    agent_id: str
    user_id: str
    session_mode: SessionMode
    session_id: str | None
    spec: Spec
    prompt: str
    deliver_to: str
    approval_mode: Literal["deny", "wait"]
    status: Status
    fire_count: int
    error_count: int
    max_errors: int
    next_run_at: float | None
    last_run_at: float | None
    last_error: str | None
    created_at: float

    @property
    def kind(self) -> Kind:
        return kind_of(self.spec)

    @property
    def timing(self) -> Timing:
        return Timing(self.id, self.status, self.next_run_at)


def _job(row: Any) -> Job:
    return Job(
        id=row.id,
        agent_id=row.agent_id,
        user_id=row.user_id,
        session_mode=row.session_mode,
        session_id=row.session_id,
        spec=spec_from_json(row.kind, dict(row.spec)),
        prompt=row.prompt,
        deliver_to=row.deliver_to,
        approval_mode=row.approval_mode,
        status=row.status,
        fire_count=row.fire_count,
        error_count=row.error_count,
        max_errors=row.max_errors,
        next_run_at=row.next_run_at,
        last_run_at=row.last_run_at,
        last_error=row.last_error,
        created_at=row.created_at,
    )


def _get_for_claim(unit: Unit, job_id: str) -> Job | None:
    """The job, row-locked on PostgreSQL (``FOR UPDATE SKIP LOCKED``): while another
    node's runner is claiming it, this one sees nothing to claim instead of waiting."""
    query = sa.select(jobs).where(jobs.c.id == job_id)
    if unit.dialect == "postgresql":
        query = query.with_for_update(skip_locked=True)
    row = unit.execute(query).first()
    return None if row is None else _job(row)


def _get(unit: Unit, job_id: str) -> Job | None:
    row = unit.execute(sa.select(jobs).where(jobs.c.id == job_id)).first()
    return None if row is None else _job(row)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a fire went, as :meth:`JobStore.record` stores it."""

    ok: bool
    error: str | None = None
    tokens: int = 0
    cost_usd: float = 0.0


class JobStore:
    """Jobs by id over the shared database (see the module invariants)."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self.db = database
        self._clock = clock

    async def create(self, new: NewJob, job_id: str | None = None) -> Job:
        now = self._clock()
        job_id = job_id or uuid.uuid4().hex[:16]
        values = {
            "id": job_id,
            "agent_id": new.agent_id,
            "user_id": new.user_id,
            "session_mode": new.session_mode,
            "session_id": new.session_id,
            "kind": kind_of(new.spec),
            "spec": spec_to_json(new.spec),
            "prompt": new.prompt,
            "deliver_to": new.deliver_to,
            "approval_mode": new.approval_mode,
            "status": "active",
            "fire_count": 0,
            "error_count": 0,
            "max_errors": new.max_errors,
            "next_run_at": new.next_run_at,
            "last_run_at": None,
            "last_error": None,
            "created_at": now,
            "updated_at": now,
        }

        def work(unit: Unit) -> Job:
            unit.execute(jobs.insert().values(**values))
            job = _get(unit, job_id)
            assert job is not None
            return job

        return await self.db.write(work)

    async def get(self, job_id: str) -> Job:
        job = await self.db.read(lambda unit: _get(unit, job_id))
        if job is None:
            raise UnknownJobError(job_id)
        return job

    async def list(self, *, agent_id: str | None = None) -> list[Job]:
        """Jobs (of one agent), oldest first."""
        query = sa.select(jobs).order_by(jobs.c.created_at, jobs.c.id)
        if agent_id is not None:
            query = query.where(jobs.c.agent_id == agent_id)
        return await self.db.read(lambda unit: [_job(r) for r in unit.execute(query)])

    async def count_open(self, agent_id: str) -> int:
        """Active and paused jobs of ``agent_id``."""
        query = (
            sa.select(sa.func.count())
            .select_from(jobs)
            .where(jobs.c.agent_id == agent_id, jobs.c.status.in_(("active", "paused")))
        )
        return await self.db.read(lambda unit: int(unit.execute(query).scalar_one()))

    async def delete(self, job_id: str) -> None:
        stmt = jobs.delete().where(jobs.c.id == job_id)
        deleted = await self.db.write(lambda unit: unit.execute(stmt).rowcount)
        if not deleted:
            raise UnknownJobError(job_id)

    async def set_status(
        self, job_id: str, status: Status, *, next_run_at: float | None = None, reset: bool = False
    ) -> Job:
        """Pause or resume (``next_run_at`` for a resumed job; ``reset`` clears errors)."""
        now = self._clock()

        def work(unit: Unit) -> Job:
            values: dict[str, Any] = {"status": status, "updated_at": now}
            if next_run_at is not None:
                values["next_run_at"] = next_run_at
            if reset:
                values["error_count"] = 0
            done = unit.execute(jobs.update().where(jobs.c.id == job_id).values(**values))
            if not done.rowcount:
                raise UnknownJobError(job_id)
            job = _get(unit, job_id)
            assert job is not None
            return job

        return await self.db.write(work)

    async def due(self, now: float) -> list[Job]:
        """Active jobs whose time came, the longest-waiting first."""
        query = (
            sa.select(jobs)
            .where(jobs.c.status == "active", jobs.c.next_run_at <= now)
            .order_by(jobs.c.next_run_at, jobs.c.id)
        )
        return await self.db.read(lambda unit: [_job(r) for r in unit.execute(query)])

    async def claim(
        self, job: Job, now: float, decide: Callable[[Job], Claim]
    ) -> tuple[Job, Claim] | None:
        """Claim ``job``'s due time at ``now`` (see the module); None when another runner
        (or an earlier life of this one) claimed it, or it was paused or deleted."""

        def work(unit: Unit) -> tuple[Job, Claim] | None:
            current = _get_for_claim(unit, job.id)
            if (
                current is None
                or current.status != "active"
                or current.next_run_at is None
                or current.next_run_at != job.next_run_at
                or current.next_run_at > now
            ):
                return None
            decision = decide(current)
            values: dict[str, Any] = {"next_run_at": decision.next_run_at, "updated_at": now}
            if decision.fire:
                values["fire_count"] = current.fire_count + 1
                values["last_run_at"] = now
            if decision.next_run_at is None:
                values["status"] = "completed"
            if decision.missed and not decision.fire:
                values["last_error"] = "missed while the gateway was down (missed_fires = skip)"
            claimed = unit.execute(
                jobs.update()
                .where(jobs.c.id == job.id, jobs.c.next_run_at == current.next_run_at)
                .values(**values)
            )
            if not claimed.rowcount:
                return None
            updated = _get(unit, job.id)
            assert updated is not None
            return updated, decision

        return await self.db.write(work)

    async def record(self, job_id: str, outcome: Outcome, *, day: str) -> Job | None:
        """Store a fire's outcome: errors counted (reset by a success); at ``max_errors``
        consecutive errors the job pauses (a one-shot job fails). None when the job was
        deleted meanwhile."""
        now = self._clock()

        def work(unit: Unit) -> Job | None:
            current = _get(unit, job_id)
            if current is None:
                return None
            values: dict[str, Any] = {"updated_at": now}
            if outcome.ok:
                values["error_count"] = 0
                values["last_error"] = None
            else:
                errors = current.error_count + 1
                values["error_count"] = errors
                values["last_error"] = outcome.error
                if current.kind == "at":
                    values["status"] = "failed"
                elif errors >= current.max_errors and current.status == "active":
                    values["status"] = "paused"
            unit.execute(jobs.update().where(jobs.c.id == job_id).values(**values))
            _add_spend(unit, current.agent_id, day, outcome.tokens, outcome.cost_usd)
            return _get(unit, job_id)

        return await self.db.write(work)

    async def add_spend(self, agent_id: str, day: str, tokens: int, cost_usd: float) -> None:
        await self.db.write(lambda unit: _add_spend(unit, agent_id, day, tokens, cost_usd))

    async def spent(self, agent_id: str, day: str) -> tuple[int, float]:
        """Background tokens and cost of ``agent_id`` on local ``day`` (``YYYY-MM-DD``)."""
        query = sa.select(spend.c.tokens, spend.c.cost_usd).where(
            spend.c.agent_id == agent_id, spend.c.day == day
        )
        row = await self.db.read(lambda unit: unit.execute(query).first())
        return (0, 0.0) if row is None else (int(row.tokens), float(row.cost_usd))


def _add_spend(unit: Unit, agent_id: str, day: str, tokens: int, cost_usd: float) -> None:
    if not tokens and not cost_usd:
        return
    updated = unit.execute(
        spend.update()
        .where(spend.c.agent_id == agent_id, spend.c.day == day)
        .values(tokens=spend.c.tokens + tokens, cost_usd=spend.c.cost_usd + cost_usd)
    )
    if not updated.rowcount:
        unit.execute(
            spend.insert().values(agent_id=agent_id, day=day, tokens=tokens, cost_usd=cost_usd)
        )
