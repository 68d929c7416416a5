"""The scheduler: jobs as the API, the tool and the CLI manage them, and the runner that
fires them and the heartbeats.

Invariants:

* The store is the truth. Each tick reads the jobs, picks the due ones with the pure
  :func:`~.due.due` and claims each in one transaction (:meth:`JobStore.claim`) before it
  fires, so a due time fires at most once across restarts and runners.
* A job never blocks another: each fire is its own task; a job whose last fire still runs
  is not claimed again until it ends.
* :meth:`stop` cancels running fires; their turns go on in the core (they were sent), and
  the claim already recorded the fire, so nothing is fired twice after a restart.
* Jobs' answers go through the outbox (:mod:`~.outbox`), drained by :attr:`deliveries`
  while the scheduler runs (from its start, so a restart sends what a crash left).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from loguru import logger

from beamclaw_core import HeartbeatSettings
from beamclaw_obs import ComponentHealth, HealthState, cancel_and_wait
from beamclaw_scheduler.beats import Heartbeats
from beamclaw_scheduler.due import Claim, claim, due
from beamclaw_scheduler.errors import InvalidScheduleError, JobLimitError
from beamclaw_scheduler.executor import fire
from beamclaw_scheduler.outbox import DeliveryOutbox
from beamclaw_scheduler.outbox_sender import DeliverySender
from beamclaw_scheduler.ports import SchedulerPorts
from beamclaw_scheduler.requests import Context, JobRequest, validate
from beamclaw_scheduler.settings import SchedulerSettings
from beamclaw_scheduler.specs import next_fire
from beamclaw_scheduler.store import Job, JobStore


class Scheduler:
    """Jobs and heartbeats of one gateway (see the module)."""

    def __init__(
        self,
        settings: SchedulerSettings,
        store: JobStore,
        ports: SchedulerPorts,
        *,
        heartbeats: dict[str, HeartbeatSettings | None] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.ports = ports
        self.heartbeats = Heartbeats(ports, store, settings.heartbeat, heartbeats or {})
        self._running: dict[str, asyncio.Task[None]] = {}
        self.deliveries = DeliverySender(DeliveryOutbox(store.db, ports.clock), ports)
        self._loop: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        self._snapshot: list[Job] = []
        self._last_error: str | None = None
        self._ticks = 0

    # ------------------------------------------------------------ management

    async def create(self, request: JobRequest) -> Job:
        """Validate and store a job (:class:`InvalidScheduleError` when refused)."""
        import uuid

        job_id = uuid.uuid4().hex[:16]
        agents = self.ports.agents()
        agent = request.agent_id or self.ports.default_agent
        ctx = Context(
            now=self.ports.clock(),
            settings=self.settings,
            default_agent=self.ports.default_agent,
            default_user=self.ports.owner,
            default_timezone=self.ports.timezone_of(
                agent if agent in agents else self.ports.default_agent
            ),
            agents=agents,
            channels=self.ports.channels.names(),
        )
        new = validate(request, ctx, seed=job_id)
        limit = self.settings.max_jobs_per_agent
        if await self.store.count_open(new.agent_id) >= limit:
            raise JobLimitError(new.agent_id, limit)
        job = await self.store.create(new, job_id)
        logger.info("scheduled job {} ({}) for agent {}", job.id, job.kind, job.agent_id)
        return job

    async def list(self, *, agent_id: str | None = None) -> list[Job]:
        return await self.store.list(agent_id=agent_id)

    async def get(self, job_id: str) -> Job:
        return await self.store.get(job_id)

    async def cancel(self, job_id: str) -> None:
        """Delete the job (:class:`UnknownJobError` when there is none); a fire already
        running finishes."""
        await self.store.delete(job_id)

    async def pause(self, job_id: str) -> Job:
        job = await self.store.get(job_id)
        if job.status not in ("active", "paused"):
            raise InvalidScheduleError("status", f"job {job_id} is {job.status}; it cannot pause")
        return await self.store.set_status(job_id, "paused")

    async def resume(self, job_id: str) -> Job:
        """Active again from now on, errors forgotten; times missed while paused are let go."""
        job = await self.store.get(job_id)
        if job.status not in ("active", "paused"):
            raise InvalidScheduleError("status", f"job {job_id} is {job.status}; it cannot resume")
        upcoming = next_fire(job.spec, self.ports.clock())
        if upcoming is None:
            raise InvalidScheduleError("at", f"job {job_id}'s time has passed; create a new one")
        return await self.store.set_status(job_id, "active", next_run_at=upcoming, reset=True)

    # ------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._loop is not None and not self._loop.done()

    def start(self) -> None:
        """Run the ticks in the background (``[scheduler] enabled``)."""
        if not self.running:
            self._loop = asyncio.create_task(self._run(), name="scheduler")
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self.deliveries.run(), name="scheduler-outbox")

    async def stop(self) -> None:
        for task in (self._loop, self._sender):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._loop = self._sender = None
        await cancel_and_wait(list(self._running.values()))
        await self.heartbeats.stop()

    async def settle(self) -> None:
        """Wait for every fire and beat started so far to end (tests, a graceful stop)."""
        tasks = [*self._running.values()]
        tasks += [r.task for r in self.heartbeats.records.values() if r.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._last_error = f"{type(exc).__name__}: {exc}"
                logger.exception("scheduler tick failed")
            await self.ports.sleep(self.settings.tick_seconds)

    async def tick(self) -> None:
        """Claim and start every due job, then the heartbeats (public for tests)."""
        self._ticks += 1
        now = self.ports.clock()
        jobs = await self.store.list()
        self._snapshot = jobs
        by_id = {j.id: j for j in jobs}
        policy, grace = self.settings.missed_fires, self.settings.missed_grace_seconds

        def decide(job: Job) -> Claim:
            return claim(job.spec, job.next_run_at or now, now, policy, grace)

        for job_id in due((j.timing for j in jobs), now):
            if job_id in self._running:
                continue
            claimed = await self.store.claim(by_id[job_id], now, decide)
            if claimed is None:
                continue
            job, decision = claimed
            if decision.missed:
                logger.info("job {} missed its time (fired: {})", job.id, decision.fire)
            if decision.fire:
                self._running[job.id] = asyncio.create_task(self._fire(job), name=f"job-{job.id}")
        await self.heartbeats.tick()

    async def _fire(self, job: Job) -> None:
        try:
            after = await fire(job, self.store, self.ports, self.deliveries)
            if after is not None and after.last_error:
                self._last_error = f"job {job.id}: {after.last_error}"
        finally:
            self._running.pop(job.id, None)

    # ------------------------------------------------------------ health

    def health(self) -> ComponentHealth:
        """Jobs by status, the next fire, the last error, each agent's heartbeat."""
        jobs = self._snapshot
        active = [j for j in jobs if j.status == "active" and j.next_run_at is not None]
        upcoming = min((j.next_run_at for j in active if j.next_run_at is not None), default=None)
        counts: dict[str, int] = {}
        for job in jobs:
            counts[job.status] = counts.get(job.status, 0) + 1
        data: dict[str, object] = {
            "running": self.running,
            "jobs": counts,
            "firing": len(self._running),
            "next_fire": _iso(upcoming),
            "last_error": self._last_error,
            "heartbeats": {a: r.view() for a, r in self.heartbeats.records.items()},
            "deliveries": {
                "sent": self.deliveries.sent,
                "failed": self.deliveries.failed,
                "last_error": self.deliveries.last_error,
            },
        }
        failing = [j.id for j in jobs if j.status == "paused" and j.error_count >= j.max_errors]
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no jobs"
        summary += f"; next fire {data['next_fire'] or '-'}"
        if self._last_error:
            summary += f"; last error: {self._last_error}"
        if not self.running:
            return ComponentHealth(HealthState.DOWN, "the scheduler is not running", data)
        if failing:
            detail = f"paused after repeated errors: {', '.join(failing)}; {summary}"
            return ComponentHealth(HealthState.DEGRADED, detail, data)
        return ComponentHealth(HealthState.UP, summary, data)


def _iso(instant: float | None) -> str | None:
    return None if instant is None else datetime.fromtimestamp(instant, UTC).isoformat()
