"""Idle sessions keep their history (issue 17, defect 1) and idle lanes leave memory
(defect 2): through Core with virtual time, a real SQLite store and the maintenance task."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import (
    SPAWN_AGENTS_TOOL,
    SUBMIT_RESULT_TOOL,
    ApprovalRequested,
    Notice,
    TurnDone,
)
from beamclaw_core.loop.executor import TurnExecutor
from beamclaw_core.providers import Capabilities
from beamclaw_core.sessions import SessionAddress, SessionLane, reset_due
from beamclaw_core.sessions.cycle_sweep import DEFER_LIMIT, MIN_EVICTED, CycleSweep
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_obs import EventType
from beamclaw_obs.testing import recording_events
from beamclaw_tools import Autonomy

from .conftest import EchoTool, VirtualTime, first, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")
DAY = 86400.0


async def ticks(vt: VirtualTime, n: int, interval: float = 60) -> None:
    """Let ``n`` maintenance passes run, one armed timer at a time, and finish (the task
    arms its next timer only after a pass)."""
    for _ in range(n):
        await vt.until_timer(interval)
        await vt.advance(interval)
    await vt.until_timer(interval)


def texts(provider: ScriptedProvider) -> list[str]:
    """Texts of the non-system messages of the latest LLM call."""
    return [m.text for m in provider.calls[-1].messages if m.role.value != "system"]


# ------------------------------------------------------------ defect 1: TTL ends the context


def test_reset_due_takes_the_smaller_idle_limit() -> None:
    assert reset_due(0, 90, daily_hour=None, idle_minutes=None, session_ttl_seconds=0) is None
    assert reset_due(0, 90, daily_hour=None, idle_minutes=None, session_ttl_seconds=60) == (
        "idle for more than 1 minute"
    )
    assert reset_due(0, 90, daily_hour=None, idle_minutes=1, session_ttl_seconds=3600) == (
        "idle for more than 1 minute"
    )
    assert reset_due(0, 90, daily_hour=None, idle_minutes=60, session_ttl_seconds=45) == (
        "idle for more than 45 seconds"
    )
    assert reset_due(0, 30, daily_hour=None, idle_minutes=60, session_ttl_seconds=45) is None


async def test_ttl_ends_the_context_and_keeps_the_history(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two")])
    settings = make_settings(
        session_ttl_seconds=1,
        maintenance={"check_interval_seconds": 60, "session_cleanup_interval_seconds": 60},
    )
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=True)
    first_turn = await core.send(ADDR, "before lunch")
    assert await first_turn.text() == "one"
    await ticks(vt, 3)  # maintenance passes run while the session is idle past its TTL
    handle = await core.send(ADDR, "after lunch")
    notice = await first(handle.events(), Notice)
    assert notice.text == "Started a fresh session: idle for more than 1 second."
    assert await handle.text() == "two"
    assert texts(provider) == ["after lunch"], "the LLM sees a fresh context"
    history = [m.text for m in await core.history(handle.session_id)]
    assert history == ["before lunch", "one", "after lunch", "two"]
    assert [s.session_id for s in await core.list_sessions()] == [handle.session_id]


async def test_no_retention_by_default_keeps_everything(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Reply("one")])
    core: Core = make_core(provider, settings=make_settings())
    assert core.settings.history_retention_days is None
    await core.start(maintenance=True)
    session_id = (await core.send(ADDR, "remember me")).session_id
    await core.wait_idle(session_id)
    vt.jump(400 * DAY)
    await vt.advance(0)  # the overdue maintenance pass runs
    await ticks(vt, 6)
    assert [m.text for m in await core.history(session_id)] == ["remember me", "one"]


async def test_retention_deletes_old_history_and_the_session_then_works(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two"), Reply("three")])
    settings = make_settings(
        history_retention_days=2,
        maintenance={"check_interval_seconds": 60, "session_cleanup_interval_seconds": 60},
    )
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=True)
    old = ADDR
    recent = SessionAddress("local:bob", "default", "tui")
    assert await (await core.send(old, "old news")).text() == "one"
    vt.jump(DAY)
    assert await (await core.send(recent, "yesterday")).text() == "two"
    vt.jump(1.5 * DAY)
    await vt.advance(0)  # the overdue maintenance pass runs
    await ticks(vt, 2)
    assert await core.store.get(core.session_id(old)) is None, "older than 2 days: deleted"
    assert [m.text for m in await core.history(core.session_id(recent))] == ["yesterday", "two"]
    handle = await core.send(old, "hello again")
    assert await handle.text() == "three"
    assert [m.text for m in await core.history(handle.session_id)] == ["hello again", "three"]


# ------------------------------------------------------------ defect 2: idle lanes leave memory


async def test_idle_lane_is_evicted_and_rebuilt_transparently(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two")])
    settings = make_settings(maintenance={"lane_idle_seconds": 120})
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=True)
    with recording_events("idle-lane-recorder") as recorder:
        session_id = (await core.send(ADDR, "first")).session_id
        await core.wait_idle(session_id)
        await ticks(vt, 1)
        assert core.loaded_sessions() == [session_id], "idle for 60 s: kept"
        await ticks(vt, 2)
        assert core.loaded_sessions() == [], "idle for 180 s: evicted"
        ended = recorder.of(EventType.SESSION_END)
    assert [(e.data["session_id"], e.data["reason"]) for e in ended] == [(session_id, "idle")]
    assert await (await core.send(ADDR, "second")).text() == "two"
    assert texts(provider) == ["first", "one", "second"], "the context continues"
    assert core.loaded_sessions() == [session_id]
    assert (await core.status(session_id)).state == "idle"


async def finished_sessions(core: Core, count: int) -> None:
    """``count`` sessions of one turn each, run to their end (idle lanes)."""
    for i in range(count):
        address = SessionAddress(f"local:user{i}", "default", "tui")
        await core.wait_idle((await core.send(address, "hello")).session_id)


def _lanes_in_memory() -> int:
    """Lanes the interpreter holds, reachable or garbage not collected yet."""
    return sum(isinstance(o, SessionLane) for o in gc.get_objects())


@contextmanager
def collector_off() -> Iterator[int]:
    """The automatic collector off for the block (only the maintenance pass's sweep frees
    lanes then); yields the lanes in memory before it."""
    gc.collect()
    before = _lanes_in_memory()
    gc.disable()
    try:
        yield before
    finally:
        gc.enable()


async def test_evicted_lanes_leave_the_heap_not_only_the_map(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    """A lane is a reference cycle: out of the map, it stays in memory until a full
    collection, which the gateway's collector tuning made rare (issue 18). With the
    automatic collector off, only the maintenance pass's sweep can free them."""
    provider = ScriptedProvider([Reply(f"ok {i}") for i in range(MIN_EVICTED)])
    settings = make_settings(maintenance={"lane_idle_seconds": 120})
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=True)
    with collector_off() as before:
        await finished_sessions(core, MIN_EVICTED)
        assert _lanes_in_memory() == before + MIN_EVICTED
        await ticks(vt, 3)
        assert core.loaded_sessions() == []
        assert _lanes_in_memory() == before


async def test_a_finished_turn_leaves_no_cycle_behind(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    """Each turn with a deadline (the default) cancelled its deadline's task at its end,
    and the task kept that cancellation, whose traceback held the executor holding the
    task: every turn's executor, context and ports waited for a collection (a 10-15 ms
    pass every ~100 turns in ``python -m bench history``). Now reference counting frees a
    turn as it ends, the automatic collector off."""
    provider = ScriptedProvider([Reply(f"ok {i}") for i in range(5)])
    core: Core = make_core(provider, settings=make_settings())
    await core.start()
    with collector_off():
        before = _in_memory(TurnExecutor)
        for i in range(5):
            handle = await core.send(ADDR, f"message {i}")
            assert await handle.text() == f"ok {i}"
            await core.wait_idle(handle.session_id)
        for _ in range(10):  # the last deadline's cancellation, then its done callback
            if _in_memory(TurnExecutor) == before:
                break
            await asyncio.sleep(0)
        assert _in_memory(TurnExecutor) == before


def _in_memory(kind: type) -> int:
    return sum(type(o) is kind for o in gc.get_objects())


def test_a_full_pass_made_elsewhere_starts_the_count_again() -> None:
    """The heap trimmer's (or CPython's own) full pass frees the lanes evicted before it:
    the sweep does not run another for them."""
    passes: list[int] = []
    full = [0]
    sweep = CycleSweep(lambda: passes.append(1), full_passes=lambda: full[0])
    assert not sweep.evicted(MIN_EVICTED - 1, loaded=0)
    full[0] += 1  # the trimmer collected
    assert not sweep.evicted(MIN_EVICTED - 1, loaded=0)
    assert sweep.pending == MIN_EVICTED - 1 and passes == []
    assert sweep.evicted(1, loaded=0)
    assert passes == [1]


def test_the_sweep_waits_for_enough_evicted_lanes() -> None:
    passes: list[int] = []
    sweep = CycleSweep(lambda: passes.append(1), full_passes=lambda: 0)
    assert not sweep.evicted(0, loaded=0)
    assert not sweep.evicted(MIN_EVICTED - 1, loaded=0)
    assert sweep.evicted(1, loaded=0), "MIN_EVICTED reached"
    assert not sweep.evicted(200, loaded=1000), "fewer than a quarter of the loaded lanes"
    assert sweep.evicted(50, loaded=1000)
    assert (passes, sweep.pending, sweep.sweeps) == ([1, 1], 0, 2)


def test_a_due_sweep_waits_for_a_quiet_pass_up_to_a_limit() -> None:
    """A full pass stalls every stream in flight: while turns run it waits, but only
    until ``DEFER_LIMIT`` times the due count of lanes have piled up."""
    passes: list[int] = []
    sweep = CycleSweep(lambda: passes.append(1), full_passes=lambda: 0)
    assert not sweep.evicted(MIN_EVICTED, loaded=0, busy=True)
    assert not sweep.evicted(0, loaded=0, busy=True), "still busy: still waiting"
    assert sweep.evicted(0, loaded=0, busy=False), "the first quiet check runs it"
    assert not sweep.evicted(MIN_EVICTED * DEFER_LIMIT - 1, loaded=0, busy=True)
    assert sweep.evicted(1, loaded=0, busy=True), "the limit: never quiet, still freed"
    assert (passes, sweep.pending) == ([1, 1], 0)


async def test_lanes_evicted_while_a_turn_runs_are_freed_once_it_ends(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([*(Reply(f"ok {i}") for i in range(MIN_EVICTED)), Hang()])
    settings = make_settings(
        maintenance={"lane_idle_seconds": 120}, loop={"turn_timeout_seconds": 100 * DAY}
    )
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=True)
    with collector_off() as before:
        await finished_sessions(core, MIN_EVICTED)
        running = await core.send(SessionAddress("local:busy", "default", "tui"), "hang")
        await ticks(vt, 3)
        assert core.loaded_sessions() == [running.session_id]
        assert _lanes_in_memory() == before + MIN_EVICTED + 1, "the sweep waits"
        assert core.turns_running()
        await core.cancel(running.session_id)
        await core.wait_idle(running.session_id)
        assert not core.turns_running()
        await ticks(vt, 1)
        assert _lanes_in_memory() == before + 1, "the first quiet pass sweeps"


async def test_lane_with_a_subscriber_or_a_pending_approval_is_kept(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider([Reply("one"), CallTool("write", {"text": "x"}), Reply("done")])
    settings = make_settings(
        autonomy_level=Autonomy.SUPERVISED,
        maintenance={"lane_idle_seconds": 60},
        loop={"approval_timeout_seconds": 100 * DAY},
    )
    core: Core = make_core(provider, write, settings=settings)
    await core.start(maintenance=True)
    watched = (await core.send(ADDR, "hi")).session_id
    await core.wait_idle(watched)
    subscription = await core.subscribe(watched)
    asking = await core.send(SessionAddress("local:bob", "default", "tui"), "write it")
    await first(asking.events(), ApprovalRequested)
    await ticks(vt, 5)
    assert sorted(core.loaded_sessions()) == sorted([watched, asking.session_id])
    subscription.close()
    await ticks(vt, 2)
    assert core.loaded_sessions() == [asking.session_id], "the pending approval keeps it"
    [pending] = await core.pending_approvals(asking.session_id)
    assert await core.answer_approval(asking.session_id, pending.request_id, "yes")
    assert isinstance(await asking.result(), TurnDone)
    await ticks(vt, 2)
    assert core.loaded_sessions() == []


async def test_sub_agent_lanes_are_evicted_too_and_status_rebuilds(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider(
        [
            CallTool(SPAWN_AGENTS_TOOL, {"tasks": ["find A"]}, id="spawn-1"),
            CallTool(SUBMIT_RESULT_TOOL, {"result": "A is 1"}),
            Reply("A is 1, says the child"),
        ]
    )
    settings = make_settings(maintenance={"lane_idle_seconds": 60})
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=True)
    handle = await core.send(ADDR, "find A")
    assert await handle.text() == "A is 1, says the child"
    children = [r.id for r in await core.store.list(include_children=True) if r.parent_id]
    assert len(children) == 1
    assert sorted(core.loaded_sessions()) == sorted([handle.session_id, *children])
    await ticks(vt, 2)
    assert core.loaded_sessions() == []
    info = await core.status(handle.session_id)
    assert (info.session_id, info.state, info.subscribers) == (handle.session_id, "idle", 0)
    assert core.loaded_sessions() == [handle.session_id], "status rebuilt the lane"


async def test_a_closed_subscription_leaves_the_bus_at_once(
    make_core: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two"), Reply("three")])
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    session_id = (await core.send(ADDR, "hi", drafts=False)).session_id
    await core.wait_idle(session_id)
    assert provider.calls[-1].stream is False, "nobody wants drafts: one plain request"
    stream = await core.subscribe(session_id)
    reader = await core.send(ADDR, "again")
    assert (await core.status(session_id)).subscribers == 2
    reader.close()  # the reader of the handle went away
    stream.close()
    assert (await core.status(session_id)).subscribers == 0, "gone before any publish"
    assert await reader.text() == "two", "a closed handle still gets its result"
    await (await core.send(ADDR, "once more", drafts=False)).text()
    assert provider.calls[-1].stream is False, "closed subscribers force no streaming"


async def test_an_evicted_session_still_gets_its_idle_compaction(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider(
        [Reply("a long answer " * 12)], capabilities=Capabilities(context_window=400)
    )
    summariser = ScriptedProvider([Reply("summary one")])
    settings = make_settings(
        loop={"compaction_threshold_pct": 100, "compaction_target_pct": 20},
        maintenance={"idle_compaction_minutes": 10, "lane_idle_seconds": 120},
    )
    core: Core = make_core(provider, settings=settings, compaction_provider=summariser)
    await core.start(maintenance=True)
    session_id = (await core.send(ADDR, "tell me things " * 10)).session_id
    await core.wait_idle(session_id)
    await ticks(vt, 3)
    assert core.loaded_sessions() == [], "evicted after 2 idle minutes"
    await ticks(vt, 7)
    assert len(summariser.calls) == 1, "compacted at 10 idle minutes all the same"
    view = await core.history(session_id, view=True)
    assert view[-1].text.startswith("a long"), "the newest messages stay verbatim"
    await ticks(vt, 20)
    assert len(summariser.calls) == 1, "once per idle period, evicted again or not"


async def test_standing_grants_survive_eviction(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider(
        [
            CallTool("write", {"text": "1"}),
            Reply("one"),
            CallTool("write", {"text": "2"}),
            Reply("two"),
        ]
    )
    settings = make_settings(
        autonomy_level=Autonomy.SUPERVISED, maintenance={"lane_idle_seconds": 60}
    )
    core: Core = make_core(provider, write, settings=settings)
    await core.start(maintenance=True)
    handle = await core.send(ADDR, "write one")
    request = await first(handle.events(), ApprovalRequested)
    assert await core.answer_approval(handle.session_id, request.request_id, "always")
    assert await handle.text() == "one"
    await ticks(vt, 2)
    assert core.loaded_sessions() == []
    again = await core.send(ADDR, "write two")
    events = [e async for e in again.events()]
    assert not any(isinstance(e, ApprovalRequested) for e in events), "the grant stands"
    assert await again.text() == "two"
    assert write.calls == [{"text": "1"}, {"text": "2"}]
