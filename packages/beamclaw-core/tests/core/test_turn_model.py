"""A turn's own model (``TurnRequest.model`` / ``Core.send(model=...)``, a heartbeat's
cheaper model): every LLM call of that turn asks for it, the person's next turn does
not, and it outlives a restart with the turn (kept on the persisted ``Turn``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, TurnDone
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_tools import Autonomy

from .conftest import EchoTool, first, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


async def test_every_call_of_the_turn_uses_its_model_and_the_next_turn_does_not(
    make_core: Callable[..., Core],
) -> None:
    provider = ScriptedProvider([CallTool("echo", {"text": "x"}), Reply("one"), Reply("two")])
    core = make_core(provider, EchoTool("echo"))
    await core.start(maintenance=False)
    try:
        done = await first((await core.send(ADDR, "beat", model="cheap")).events(), TurnDone)
        assert done.text == "one"
        await first((await core.send(ADDR, "person")).events(), TurnDone)
    finally:
        await core.stop()
    assert [c.options.model for c in provider.calls] == ["cheap", "cheap", None]


async def test_the_model_outlives_a_restart_with_its_pending_turn(
    make_core: Callable[..., Core],
) -> None:
    settings = make_settings(autonomy_level=Autonomy.SUPERVISED)
    script = [CallTool("write", {"text": "t"}), Reply("Written.")]
    before = make_core(
        ScriptedProvider(script), EchoTool("write", approval=True), settings=settings
    )
    await before.start(maintenance=False)
    handle = await before.send(ADDR, "write it", model="cheap")
    asked = await first(handle.events(), ApprovalRequested)
    await before.stop()

    provider = ScriptedProvider(script[1:])
    after = make_core(provider, EchoTool("write", approval=True), settings=settings)
    await after.start(maintenance=False)
    try:
        async with asyncio.timeout(10):
            while not await after.pending_approvals():
                await asyncio.sleep(0.005)
        events = await after.subscribe(
            handle.session_id, after_seq=await after.event_seq(handle.session_id)
        )
        assert await after.answer_approval(handle.session_id, asked.request_id, "yes")
        done = await first(events, TurnDone)
        events.close()
    finally:
        await after.stop()
    assert done.text.endswith("Written.")
    assert [c.options.model for c in provider.calls] == ["cheap"]
