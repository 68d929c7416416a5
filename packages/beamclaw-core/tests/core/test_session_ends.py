"""Session ends reach the hooks registered with ``Core.on_session_end`` (issue 19): a
reset of the context (``/new``, ``/reset``, the idle reset), a deleted session, a lane
evicted when idle, and every lane at stop; a failing hook harms neither the core nor the
other hooks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.sessions import SessionAddress, SessionEnd
from beamclaw_core.testing import Reply, ScriptedProvider, VirtualTime

from .conftest import make_settings
from .test_idle_sessions import ticks

ADDR = SessionAddress("local:ann", "default", "test")


def recorder(core: Core) -> list[SessionEnd]:
    seen: list[SessionEnd] = []

    async def hook(end: SessionEnd) -> None:
        seen.append(end)

    core.on_session_end(hook)
    return seen


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_resets_delete_and_stop_end_sessions(make_core: Callable[..., Any]) -> None:
    core: Core = make_core(ScriptedProvider([Reply("a"), Reply("b"), Reply("c")]))
    await core.start(maintenance=False)
    seen = recorder(core)

    async def failing(_end: SessionEnd) -> None:
        raise RuntimeError("a broken hook")

    core.on_session_end(failing)
    first = await core.send(ADDR, "hello")
    await first.result()
    await (await core.send(ADDR, "/new")).result()
    await core.reset(first.session_id)
    other = await core.send(SessionAddress("local:bo", "default", "test"), "hi")
    await other.result()
    assert await core.delete(other.session_id)
    await settle()
    assert [(e.session_id, e.reason, e.closed) for e in seen] == [
        (first.session_id, "/new", False),
        (first.session_id, "reset", False),
        (other.session_id, "deleted", True),
    ]
    assert seen[0].agent_id == "default" and seen[0].user_id == "local:ann"
    assert await (await core.send(ADDR, "still works")).text() == "c"
    await core.stop()
    assert (first.session_id, "shutdown", True) in [
        (e.session_id, e.reason, e.closed) for e in seen
    ]


async def test_stop_waits_for_the_hooks_of_the_shutdown(make_core: Callable[..., Any]) -> None:
    core: Core = make_core(ScriptedProvider([Reply("a")]))
    await core.start(maintenance=False)
    finished: list[str] = []

    async def slow(end: SessionEnd) -> None:
        await asyncio.sleep(0.05)
        finished.append(end.reason)

    remove = core.on_session_end(slow)
    await (await core.send(ADDR, "hello")).result()
    await core.stop()
    assert finished == ["shutdown"]
    remove()


async def test_an_idle_lane_leaving_memory_ends_it_and_a_removed_hook_hears_nothing(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    settings = make_settings(maintenance={"lane_idle_seconds": 120})
    core: Core = make_core(ScriptedProvider([Reply("one")]), settings=settings)
    await core.start(maintenance=True)
    seen = recorder(core)
    unheard: list[SessionEnd] = []

    async def removed(end: SessionEnd) -> None:
        unheard.append(end)

    core.on_session_end(removed)()
    session_id = (await core.send(ADDR, "first")).session_id
    await core.wait_idle(session_id)
    await ticks(vt, 3)
    await settle()
    assert [(e.session_id, e.reason, e.closed) for e in seen] == [(session_id, "idle", True)]
    assert unheard == []
