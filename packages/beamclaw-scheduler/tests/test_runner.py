"""The runner with an injected clock over a real core and database: no double fire across
runners and restarts, the missed-fire policy, delivery, auto-pause with the person told,
the due decision."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from beamclaw_core.kinds import ErrorKind
from beamclaw_core.testing import Fail, Reply, ScriptedProvider
from beamclaw_scheduler import JobRequest, SchedulerSettings
from beamclaw_scheduler.due import Timing, claim, due
from beamclaw_scheduler.specs import Every

from .conftest import T0


def _prompts(provider: ScriptedProvider) -> list[str]:
    return [m.text for call in provider.calls for m in call.messages[-1:] if m.role.value == "user"]


async def test_a_due_time_fires_once_across_two_runners_and_a_restart(
    world_factory: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([Reply("done")], repeat_last=True)
    world = await world_factory(provider)
    first = world.scheduler()
    job = await first.create(
        JobRequest(prompt="water the plants", every_seconds=60, deliver_to="rec:me")
    )
    assert job.next_run_at == T0 + 60
    world.clock.now = T0 + 60
    second = world.scheduler()  # another runner on the same database
    await asyncio.gather(first.tick(), second.tick())
    await asyncio.gather(first.settle(), second.settle())
    restarted = world.scheduler()  # the gateway after a restart, same instant
    await restarted.tick()
    await restarted.settle()
    assert len(provider.calls) == 1
    assert world.channel.sent == ["done"]
    stored = await restarted.get(job.id)
    assert stored.fire_count == 1 and stored.next_run_at == T0 + 120
    world.clock.now = T0 + 120
    await restarted.tick()
    await restarted.settle()
    assert len(provider.calls) == 2 and "water the plants" in _prompts(provider)[-1]


async def test_missed_fires_run_once(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("late but done")], repeat_last=True)
    world = await world_factory(provider)
    scheduler = world.scheduler()
    job = await scheduler.create(JobRequest(prompt="p", every_seconds=60))
    world.clock.now = T0 + 3600  # down for an hour: 59 times missed
    restarted = world.scheduler()
    await restarted.tick()
    await restarted.settle()
    await restarted.tick()
    await restarted.settle()
    stored = await restarted.get(job.id)
    assert len(provider.calls) == 1 and stored.fire_count == 1
    assert stored.next_run_at == T0 + 3660


async def test_missed_fires_skip(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("x")], repeat_last=True)
    world = await world_factory(provider)
    settings = SchedulerSettings(enabled=True, min_interval_seconds=1, missed_fires="skip")
    scheduler = world.scheduler(settings)
    job = await scheduler.create(JobRequest(prompt="p", every_seconds=60))
    once = await scheduler.create(JobRequest(prompt="one shot", at="2027-01-15T08:30:00+00:00"))
    world.clock.now = T0 + 3600
    await scheduler.tick()
    await scheduler.settle()
    assert provider.calls == []
    stored = await scheduler.get(job.id)
    assert stored.fire_count == 0 and stored.next_run_at == T0 + 3660
    assert stored.status == "active"
    gone = await scheduler.get(once.id)
    assert gone.status == "completed" and gone.fire_count == 0
    assert gone.last_error is not None and "missed" in gone.last_error


async def test_errors_pause_the_job_and_the_person_is_told(
    world_factory: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([Fail(ErrorKind.AUTH, "bad key")], repeat_last=True)
    world = await world_factory(provider)
    scheduler = world.scheduler()
    job = await scheduler.create(
        JobRequest(prompt="p", every_seconds=10, deliver_to="rec:me", max_errors=2)
    )
    for step in (1, 2, 3):
        world.clock.now = T0 + 10 * step
        await scheduler.tick()
        await scheduler.settle()
    stored = await scheduler.get(job.id)
    assert stored.status == "paused" and stored.error_count == 2
    assert len(provider.calls) == 2, "a paused job does not fire"
    assert len(world.channel.sent) == 1 and "paused" in world.channel.sent[0]
    assert job.id in world.channel.sent[0]
    resumed = await scheduler.resume(job.id)
    assert resumed.status == "active" and resumed.error_count == 0


async def test_a_delivery_failure_is_an_error(world_factory: Callable[..., Any]) -> None:
    world = await world_factory(ScriptedProvider([Reply("hi")], repeat_last=True))
    scheduler = world.scheduler()
    job = await scheduler.create(JobRequest(prompt="p", every_seconds=10, deliver_to="rec:else"))
    world.clock.now = T0 + 10
    await scheduler.tick()
    await scheduler.settle()
    stored = await scheduler.get(job.id)
    assert stored.error_count == 1 and "else" in (stored.last_error or "")


async def test_a_deleted_job_never_fires(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("x")], repeat_last=True)
    world = await world_factory(provider)
    scheduler = world.scheduler()
    job = await scheduler.create(JobRequest(prompt="p", every_seconds=10))
    await scheduler.cancel(job.id)
    world.clock.now = T0 + 100
    await scheduler.tick()
    await scheduler.settle()
    assert provider.calls == [] and await scheduler.list() == []


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["active", "paused", "completed"]), st.none() | st.floats(0, 100)
        ),
        max_size=12,
    ),
    st.floats(0, 100),
)
def test_due_picks_active_jobs_whose_time_came_oldest_first(
    rows: list[tuple[str, float | None]], now: float
) -> None:
    jobs = [Timing(f"j{i}", status, at) for i, (status, at) in enumerate(rows)]
    picked = due(jobs, now)
    by_id = {j.job_id: j for j in jobs}
    expected = {
        j.job_id
        for j in jobs
        if j.status == "active" and j.next_run_at is not None and j.next_run_at <= now
    }
    assert set(picked) == expected
    times = [by_id[i].next_run_at for i in picked]
    assert times == sorted(times)  # type: ignore[type-var]


@given(st.integers(1, 3600), st.floats(0, 10_000), st.floats(0, 100_000), st.floats(0, 600))
def test_a_claim_always_moves_past_now(
    seconds: int, scheduled_offset: float, late: float, grace: float
) -> None:
    spec = Every(seconds, 1000.0)
    scheduled = 1000.0 + scheduled_offset
    now = scheduled + late
    for policy in ("run_once", "skip"):
        decision = claim(spec, scheduled, now, policy, grace)  # type: ignore[arg-type]
        assert decision.next_run_at is not None and decision.next_run_at > now
        assert decision.missed == (now - scheduled > grace)
        assert decision.fire == (not decision.missed or policy == "run_once")
