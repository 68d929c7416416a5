"""``/always`` is a standing grant per agent and person: durable before the tool runs,
honoured by every session of that person with that agent across restarts, kept by
``/new`` and ``/reset``, listed and revoked through :class:`Core`; autonomy still applies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.approvals import AlwaysGrant
from beamclaw_core.loop import ApprovalRequested, ApprovalResolved, TurnDone
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_tools import Autonomy, SessionRef, ToolOutput

from .conftest import EchoTool, first, make_settings

ANN_TUI = SessionAddress("local:ann", "default", "tui")
ANN_WEB = SessionAddress("local:ann", "default", "web")
BOB = SessionAddress("local:bob", "default", "tui")
ANN_OTHER_AGENT = SessionAddress("local:ann", "helper", "tui")


def supervised() -> Any:
    return make_settings(autonomy_level=Autonomy.SUPERVISED, session_sharing="per_channel")


async def asked(core: Core, address: SessionAddress, text: str) -> bool:
    """Send ``text``; True when the turn asked for an approval (then denied with /no)."""
    handle = await core.send(address, text)
    async for event in handle.events():
        if isinstance(event, ApprovalRequested):
            await core.answer_approval(handle.session_id, event.request_id, "no")
            await handle.result()
            return True
        if isinstance(event, TurnDone):
            return False
    raise AssertionError("the turn ended without TurnDone")


async def grant_write(core: Core, address: SessionAddress) -> str:
    handle = await core.send(address, "write something")
    events = handle.events()
    await first(events, ApprovalRequested)
    assert await (await core.send(address, "/always")).text() == "Approved (always): write."
    await first(events, TurnDone)
    return handle.session_id


async def test_always_survives_a_restart_for_that_person_and_agent_only(
    make_core: Callable[..., Core],
) -> None:
    write = EchoTool("write", approval=True)
    script = [CallTool("write", {"text": "1"}), Reply("done")]
    first_core = make_core(ScriptedProvider(script), write, settings=supervised())
    await first_core.start(maintenance=False)
    granted_in = await grant_write(first_core, ANN_TUI)
    assert write.calls == [{"text": "1"}]
    await first_core.stop()

    write2 = EchoTool("write", approval=True)
    core = make_core(ScriptedProvider(script * 5), write2, settings=supervised())
    await core.start(maintenance=False)
    [grant] = await core.always_grants()
    assert (grant.agent_id, grant.user_id, grant.tool, grant.session_id) == (
        "default",
        "local:ann",
        "write",
        granted_in,
    )
    # a new session of the same person with the same agent: runs without asking
    assert not await asked(core, ANN_WEB, "write from the web")
    assert write2.calls == [{"text": "1"}]
    # another person, or the same person with another agent, is still asked
    assert await asked(core, BOB, "bob writes")
    assert await asked(core, ANN_OTHER_AGENT, "ann asks helper")
    assert len(write2.calls) == 1

    # revoked: asked again, in the session where it was granted too
    assert await core.revoke_always("default", "local:ann", "write") == 1
    assert await core.always_grants() == []
    assert await asked(core, ANN_WEB, "write again")
    assert await asked(core, ANN_TUI, "write in the first session")
    assert await core.revoke_always("default", "local:ann", "write") == 0


class GrantProbe(EchoTool):
    """``write`` that records, as it runs, the grants the core has stored."""

    def __init__(self) -> None:
        super().__init__("write", approval=True)
        self.core: Core | None = None
        self.seen: list[list[AlwaysGrant]] = []

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        assert self.core is not None
        self.seen.append(await self.core.always_grants(user_id=session.user_id))
        return await super().execute(args, session)


async def test_the_grant_is_stored_before_the_tool_runs(make_core: Callable[..., Core]) -> None:
    write = GrantProbe()
    script = [CallTool("write", {"text": "1"}), Reply("done")]
    core = make_core(ScriptedProvider(script), write, settings=supervised())
    write.core = core
    await core.start(maintenance=False)
    await grant_write(core, ANN_TUI)
    assert [[g.tool for g in grants] for grants in write.seen] == [["write"]]


async def test_new_and_reset_keep_the_grant(make_core: Callable[..., Core]) -> None:
    write = EchoTool("write", approval=True)
    script = [CallTool("write", {"text": "1"}), Reply("done")]
    core = make_core(ScriptedProvider(script * 3), write, settings=supervised())
    await core.start(maintenance=False)
    await grant_write(core, ANN_TUI)
    for command in ("/new", "/reset"):
        await (await core.send(ANN_TUI, command)).text()
        assert not await asked(core, ANN_TUI, f"write after {command}")
    status = await (await core.send(ANN_TUI, "/status")).text()
    assert "Always-approved tools: write" in status
    assert len(write.calls) == 3


async def test_list_filters_and_revoke_all_of_a_person(make_core: Callable[..., Core]) -> None:
    write, edit = EchoTool("write", approval=True), EchoTool("edit", approval=True)
    script = [CallTool("write", {"text": "1"}), Reply("done")]
    edit_script = [CallTool("edit", {"text": "1"}), Reply("done")]
    core = make_core(
        ScriptedProvider(script + edit_script + script), write, edit, settings=supervised()
    )
    await core.start(maintenance=False)
    await grant_write(core, ANN_TUI)
    handle = await core.send(ANN_TUI, "edit")
    events = handle.events()
    await first(events, ApprovalRequested)
    await (await core.send(ANN_TUI, "/always")).text()
    await first(events, TurnDone)
    await grant_write(core, BOB)

    everything = await core.always_grants()
    assert [(g.user_id, g.tool) for g in everything] == [
        ("local:ann", "edit"),
        ("local:ann", "write"),
        ("local:bob", "write"),
    ]
    assert [g.tool for g in await core.always_grants(user_id="local:ann")] == ["edit", "write"]
    assert await core.always_grants(agent_id="helper") == []
    assert await core.revoke_always("default", "local:ann") == 2
    assert [g.user_id for g in await core.always_grants()] == ["local:bob"]
    status = await (await core.send(ANN_TUI, "/status")).text()
    assert "Always-approved tools: none" in status


async def test_read_only_autonomy_still_denies_a_granted_tool(
    make_core: Callable[..., Core],
) -> None:
    write = EchoTool("write", approval=True, min_autonomy=Autonomy.READ_ONLY)
    script = [CallTool("write", {"text": "1"}), Reply("done")]
    granting = make_core(ScriptedProvider(script), write, settings=supervised())
    await granting.start(maintenance=False)
    await grant_write(granting, ANN_TUI)
    await granting.stop()

    read_only = make_settings(autonomy_level=Autonomy.READ_ONLY, session_sharing="per_channel")
    core = make_core(ScriptedProvider(script), write, settings=read_only)
    await core.start(maintenance=False)
    handle = await core.send(ANN_TUI, "write while read-only")
    resolved = await first(handle.events(), ApprovalResolved)
    assert resolved.decision == "policy"
    assert await handle.text() == "done"
    assert write.calls == [{"text": "1"}], "the grant does not lift read_only"
