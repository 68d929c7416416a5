"""A pending approval outlives a restart (issue 19): the next core finds the turn waiting
for the same request, asks again, and a late answer still runs the tool and ends the
turn; a second answer to it is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, ApprovalResolved, TurnDone
from beamclaw_core.messages import Role
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_tools import Autonomy

from .conftest import EchoTool, first, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


async def until_pending(core: Core) -> None:
    """The recovered turn asks again once its worker has run (start does not wait)."""
    async with asyncio.timeout(10):
        while not await core.pending_approvals():
            await asyncio.sleep(0.005)


async def test_a_restart_keeps_the_pending_approval(make_core: Callable[..., Core]) -> None:
    settings = make_settings(autonomy_level=Autonomy.SUPERVISED)
    script = [CallTool("write", {"text": "keep me"}), Reply("Written.")]
    before = make_core(
        ScriptedProvider(script), EchoTool("write", approval=True), settings=settings
    )
    await before.start(maintenance=False)
    handle = await before.send(ADDR, "write it down")
    asked = await first(handle.events(), ApprovalRequested)
    await before.stop()

    write = EchoTool("write", approval=True)
    after = make_core(ScriptedProvider(script[1:]), write, settings=settings)
    await after.start(maintenance=False)
    await until_pending(after)
    [pending] = await after.pending_approvals()
    assert (pending.session_id, pending.request_id, pending.tool) == (
        handle.session_id,
        asked.request_id,
        "write",
    )
    events = await after.subscribe(
        handle.session_id, after_seq=await after.event_seq(handle.session_id)
    )
    assert await after.answer_approval(handle.session_id, asked.request_id, "yes")
    assert not await after.answer_approval(handle.session_id, asked.request_id, "no")
    resolved = await first(events, ApprovalResolved)
    done = await first(events, TurnDone)
    events.close()
    assert resolved.decision == "yes" and done.text.endswith("Written.")
    assert write.calls == [{"text": "keep me"}]
    history = await after.history(handle.session_id)
    tool_results = [m for m in history if m.role is Role.TOOL]
    assert len(tool_results) == 1 and "keep me" in tool_results[0].text
