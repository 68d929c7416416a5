"""Heartbeats: the skip rules (pure), no LLM call when idle, ``HEARTBEAT_OK`` neither
delivered nor kept, a real answer delivered, failures pausing beats, the daily cap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import time
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from beamclaw_core import HeartbeatSettings
from beamclaw_core.kinds import ErrorKind
from beamclaw_core.messages import Usage
from beamclaw_core.testing import Fail, Reply, ScriptedProvider
from beamclaw_core.workspace import BootstrapFile, default_template
from beamclaw_scheduler import SchedulerSettings
from beamclaw_scheduler.beats import heartbeat_session
from beamclaw_scheduler.heartbeat import BeatState, decide, is_quiet, task_lines

from .conftest import T0

BUSY_STATE = BeatState(
    enabled=True,
    due=True,
    local_time=time(12, 0),
    active_hours=None,
    beat_running=False,
    session_busy=False,
    paused=False,
    over_cap=False,
    tasks=1,
)


def test_the_default_template_holds_no_task_line() -> None:
    assert task_lines(default_template(BootstrapFile.HEARTBEAT, "default")) == []


def test_task_lines_are_everything_but_headings_comments_and_blanks() -> None:
    text = "# Title\n\n<!-- a\n- not a task\n-->\n## Tasks\n- check the build\n  \nwatch prices\n"
    assert task_lines(text) == ["- check the build", "watch prices"]


def test_quiet_answers() -> None:
    for quiet in (
        "HEARTBEAT_OK",
        "  **HEARTBEAT_OK**\n",
        "HEARTBEAT_OK — all calm.",
        "ok. HEARTBEAT_OK",
    ):
        assert is_quiet(quiet), quiet
    for loud in (
        "Your flight leaves in 2 hours: check in now.",
        "HEARTBEAT_OK? No: " + "x" * 80,
        "",
    ):
        assert not is_quiet(loud), loud


def test_each_skip_rule() -> None:
    assert decide(BUSY_STATE) is None
    cases = {
        "disabled": replace(BUSY_STATE, enabled=False),
        "not_due": replace(BUSY_STATE, due=False),
        "paused_after_failures": replace(BUSY_STATE, paused=True),
        "outside_active_hours": replace(BUSY_STATE, active_hours=(time(22, 0), time(6, 0))),
        "last_beat_running": replace(BUSY_STATE, beat_running=True),
        "session_busy": replace(BUSY_STATE, session_busy=True),
        "no_tasks": replace(BUSY_STATE, tasks=0),
        "daily_cap_reached": replace(BUSY_STATE, over_cap=True),
    }
    for reason, state in cases.items():
        assert decide(state) == reason


@given(st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 3))
def test_a_beat_runs_only_when_every_rule_allows(
    due: bool, running: bool, busy: bool, paused: bool, over: bool, tasks: int
) -> None:
    state = replace(
        BUSY_STATE,
        due=due,
        beat_running=running,
        session_busy=busy,
        paused=paused,
        over_cap=over,
        tasks=tasks,
    )
    runs = decide(state) is None
    assert runs == (due and not running and not busy and not paused and not over and tasks > 0)


def _settings(**heartbeat: Any) -> SchedulerSettings:
    return SchedulerSettings(
        enabled=True,
        heartbeat=HeartbeatSettings(every_seconds=60, deliver_to="rec:me", **heartbeat),
    )


async def _beat(world: Any, scheduler: Any, at: float) -> None:
    world.clock.now = at
    await scheduler.tick()
    await scheduler.settle()


async def test_an_idle_heartbeat_makes_no_llm_call(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("HEARTBEAT_OK")], repeat_last=True)
    world = await world_factory(provider)
    world.heartbeat_md.write_text(default_template(BootstrapFile.HEARTBEAT, "default"))
    scheduler = world.scheduler(_settings())
    for minute in range(10):
        await _beat(world, scheduler, T0 + 60 * minute + 1)
    assert provider.calls == []
    assert scheduler.heartbeats.records["default"].last_skip == "no_tasks"


async def test_heartbeat_ok_is_neither_delivered_nor_kept(
    world_factory: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([Reply("HEARTBEAT_OK")], repeat_last=True)
    world = await world_factory(provider)
    world.heartbeat_md.write_text("# Tasks\n- check the build\n")
    scheduler = world.scheduler(_settings())
    await _beat(world, scheduler, T0)  # first tick: the first beat is one interval later
    await _beat(world, scheduler, T0 + 61)
    assert len(provider.calls) == 1
    assert "check the build" in provider.calls[0].messages[-1].text
    assert world.channel.sent == []
    assert world.sessions.forgotten == [heartbeat_session("default")]
    assert await world.core.store.get(heartbeat_session("default")) is None
    assert scheduler.heartbeats.records["default"].last_result == "quiet"


async def test_a_real_answer_is_delivered_and_kept(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("Your build is red.")], repeat_last=True)
    world = await world_factory(provider)
    world.heartbeat_md.write_text("- check the build\n")
    scheduler = world.scheduler(_settings())
    await _beat(world, scheduler, T0)
    await _beat(world, scheduler, T0 + 61)
    assert world.channel.sent == ["Your build is red."]
    history = await world.core.history(heartbeat_session("default"))
    assert history[-1].text == "Your build is red."


async def test_beats_skip_outside_active_hours(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("HEARTBEAT_OK")], repeat_last=True)
    world = await world_factory(provider)
    world.heartbeat_md.write_text("- task\n")
    scheduler = world.scheduler(_settings(active_hours="22:00-06:00"))  # T0 is 08:00 UTC
    await _beat(world, scheduler, T0)
    await _beat(world, scheduler, T0 + 61)
    assert provider.calls == []
    assert scheduler.heartbeats.records["default"].last_skip == "outside_active_hours"


async def test_failures_pause_beats(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Fail(ErrorKind.AUTH, "bad key")], repeat_last=True)
    world = await world_factory(provider)
    world.heartbeat_md.write_text("- task\n")
    scheduler = world.scheduler(_settings(max_failures=2))
    for step in range(5):
        await _beat(world, scheduler, T0 + 61 * step)
    assert len(provider.calls) == 2
    assert scheduler.heartbeats.records["default"].last_skip == "paused_after_failures"
    scheduler.heartbeats.resume("default")
    await _beat(world, scheduler, T0 + 61 * 6)
    assert len(provider.calls) == 3


async def test_the_daily_cap_stops_beats(world_factory: Callable[..., Any]) -> None:
    costly = Reply("Something happened.", usage=Usage(total_tokens=500, cost_usd=0.02))
    provider = ScriptedProvider([costly], repeat_last=True)
    world = await world_factory(provider)
    world.heartbeat_md.write_text("- task\n")
    scheduler = world.scheduler(_settings(daily_cost_cap_usd=0.03))
    for step in range(5):
        await _beat(world, scheduler, T0 + 61 * step)
    assert len(provider.calls) == 2, "the second beat crossed the cap"
    assert scheduler.heartbeats.records["default"].last_skip == "daily_cap_reached"
    assert await scheduler.store.spent("default", "2027-01-15") == (1000, 0.04)
