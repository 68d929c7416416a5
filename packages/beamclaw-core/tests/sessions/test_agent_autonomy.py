"""``[agents.<id>] autonomy_level``: each agent's turns and ``/status`` use its own level."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beamclaw_core import AgentSettings, agent_profile
from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, ApprovalResolved
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import CallTool, EchoTool, Reply, ScriptedProvider
from beamclaw_tools import Autonomy

READER = AgentSettings(autonomy_level=Autonomy.READ_ONLY)


async def next_of(handle: Any, kind: type) -> Any:
    async for event in handle.events():
        if isinstance(event, kind):
            return event
    raise AssertionError(f"no {kind.__name__}")


async def test_read_only_agent_denies_what_the_supervised_default_asks_about(
    make_core: Callable[..., Any],
) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider(
        [
            CallTool("write", {"text": "a"}),
            Reply("default asked"),
            CallTool("write", {"text": "b"}),
            Reply("reader denied"),
        ]
    )
    core: Core = make_core(provider, write, agents={"reader": READER})
    await core.start(maintenance=False)

    default = await core.send(SessionAddress("local:ann", "default", "tui"), "write a")
    request = await next_of(default, ApprovalRequested)
    assert request.tool == "write"
    await core.send(SessionAddress("local:ann", "default", "tui"), "/yes")
    assert await default.text() == "default asked"

    reader = await core.send(SessionAddress("local:ann", "reader", "tui"), "write b")
    resolved = await next_of(reader, ApprovalResolved)
    assert resolved.decision == "policy"
    assert await reader.text() == "reader denied"
    assert write.calls == [{"text": "a"}]

    status = await core.send(SessionAddress("local:ann", "reader", "tui"), "/status")
    assert "Autonomy: read_only" in await status.text()
    status = await core.send(SessionAddress("local:ann", "default", "tui"), "/status")
    assert "Autonomy: supervised" in await status.text()


def test_unset_keys_and_unlisted_agents_fall_back_to_core() -> None:
    core = CoreSettings(default_provider="openai", autonomy_level=Autonomy.FULL)
    agents = {"cheap": AgentSettings(model="gpt-4o-mini"), "other": AgentSettings(provider="x")}
    unlisted = agent_profile(core, agents, "nobody")
    assert (unlisted.provider, unlisted.model_override, unlisted.autonomy) == (
        "openai",
        None,
        Autonomy.FULL,
    )
    assert unlisted.model(core) == "gpt-4o"
    cheap = agent_profile(core, agents, "cheap")
    assert (cheap.provider, cheap.model(core), cheap.autonomy) == (
        "openai",
        "gpt-4o-mini",
        Autonomy.FULL,
    )
    assert agent_profile(core, agents, "other").model(core) == ""
