"""Supervisor: one_for_one restarts, intensity MaxR/MaxT, backoff, restart types."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_obs import (
    Backoff,
    ChildSpec,
    ChildState,
    Emitter,
    Event,
    EventType,
    Restart,
    Supervisor,
    SupervisorError,
    get_emitter,
)

FAST = Backoff(initial=0.001, factor=2.0, maximum=0.01)


class Collect:
    name = "collect-sup"

    def __init__(self) -> None:
        self.events: list[Event] = []

    def handle(self, event: Event) -> None:
        self.events.append(event)

    def close(self) -> None:
        return None


async def test_crashing_child_is_restarted_and_siblings_untouched() -> None:
    sup = Supervisor("t", max_restarts=5, window_seconds=10, backoff=FAST)
    runs = {"crashy": 0, "steady": 0}
    steady_started = asyncio.Event()

    async def crashy() -> None:
        runs["crashy"] += 1
        if runs["crashy"] < 3:
            raise RuntimeError("boom")
        await asyncio.sleep(3600)

    async def steady() -> None:
        runs["steady"] += 1
        steady_started.set()
        await asyncio.sleep(3600)

    sup.start_child(ChildSpec("steady", steady))
    sup.start_child(ChildSpec("crashy", crashy))
    await steady_started.wait()
    for _ in range(200):
        if runs["crashy"] >= 3:
            break
        await asyncio.sleep(0.005)
    status = sup.status()
    assert status["crashy"].restarts == 2
    assert status["crashy"].state is ChildState.RUNNING
    assert "boom" in (status["crashy"].last_error or "")
    assert runs["steady"] == 1
    assert sup.child_status("crashy") is status["crashy"]
    assert sup.child_status("nobody") is None
    await sup.stop()
    assert all(s.state is ChildState.STOPPED for s in sup.status().values())


async def test_restart_intensity_exceeded_gives_up() -> None:
    collect = Collect()
    emitter: Emitter = get_emitter()
    emitter.add_backend(collect)
    gave_up: list[BaseException | None] = []

    async def always_crash() -> None:
        raise ValueError("nope")

    async def on_give_up(err: BaseException | None) -> None:
        gave_up.append(err)

    sup = Supervisor("t2", max_restarts=3, window_seconds=60, backoff=FAST)
    sup.start_child(ChildSpec("bad", always_crash, on_give_up=on_give_up))
    for _ in range(400):
        if sup.status()["bad"].state is ChildState.FAILED:
            break
        await asyncio.sleep(0.005)
    assert sup.status()["bad"].state is ChildState.FAILED
    assert sup.status()["bad"].restarts == 3
    assert len(gave_up) == 1 and isinstance(gave_up[0], ValueError)
    emitter.flush()
    emitter.remove_backend(collect.name)
    types = [e.type for e in collect.events if e.data.get("supervisor") == "t2"]
    assert types.count(EventType.CHILD_RESTARTED) == 3
    assert EventType.CHILD_GAVE_UP in types


async def test_window_forgets_old_crashes() -> None:
    now = [0.0]
    crashes = {"n": 0}
    done = asyncio.Event()

    async def crash_sometimes() -> None:
        crashes["n"] += 1
        now[0] += 100.0  # every crash happens "100 s" after the previous one
        if crashes["n"] >= 6:
            done.set()
            await asyncio.sleep(3600)
        raise RuntimeError("late crash")

    sup = Supervisor("t3", max_restarts=2, window_seconds=10, backoff=FAST, clock=lambda: now[0])
    sup.start_child(ChildSpec("c", crash_sometimes))
    await asyncio.wait_for(done.wait(), 5)
    assert sup.status()["c"].state is ChildState.RUNNING
    await sup.stop()


async def test_transient_child_normal_exit_is_not_restarted() -> None:
    runs = {"n": 0}

    async def finish() -> None:
        runs["n"] += 1

    sup = Supervisor("t4", backoff=FAST)
    sup.start_child(ChildSpec("once", finish, restart=Restart.TRANSIENT))
    await asyncio.sleep(0.05)
    assert runs["n"] == 1
    assert sup.status()["once"].state is ChildState.STOPPED


async def test_permanent_child_normal_exit_is_restarted() -> None:
    runs = {"n": 0}
    enough = asyncio.Event()

    async def finish() -> None:
        runs["n"] += 1
        if runs["n"] >= 3:
            enough.set()
            await asyncio.sleep(3600)

    sup = Supervisor("t5", backoff=FAST)
    sup.start_child(ChildSpec("loop", finish))
    await asyncio.wait_for(enough.wait(), 5)
    await sup.stop()


async def test_duplicate_and_unknown_children_are_errors() -> None:
    async def idle() -> None:
        await asyncio.sleep(3600)

    sup = Supervisor("t6")
    sup.start_child(ChildSpec("a", idle))
    with pytest.raises(SupervisorError):
        sup.start_child(ChildSpec("a", idle))
    with pytest.raises(SupervisorError):
        await sup.stop_child("missing")
    await sup.stop()
    with pytest.raises(SupervisorError):
        sup.start_child(ChildSpec("b", idle))


def test_backoff_grows_and_caps() -> None:
    b = Backoff(initial=0.5, factor=2, maximum=3)
    assert [b.delay(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
