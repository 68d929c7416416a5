"""The core's composition root (``sessions/composition.py``): one place builds the frozen
runtime and the ports of every turn executor."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Hashable
from pathlib import Path

import pytest

from beamclaw_core.api import Core
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.executor import ViewCache
from beamclaw_core.loop.inputs import CompactionDone
from beamclaw_core.loop.states import Idle
from beamclaw_core.loop.turn_events import TurnDone, TurnEvent
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import Capabilities
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.sessions.composition import (
    CoreHooks,
    CoreParts,
    build_runtime,
    lane_ports,
    provider_lookup,
)
from beamclaw_core.sessions.prompts import StaticPrompt, WorkspacePrompt
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import EchoTool, Reply, ScriptedProvider, VirtualTime
from beamclaw_memory import Database
from beamclaw_tools import Autonomy, SessionRef, ToolCall, ToolRegistry


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'root.db'}")
    yield db
    await db.dispose()


class Recorder:
    """Core hooks that write down what reached them."""

    def __init__(self) -> None:
        self.log: list[object] = []

    async def latest(self, session_id: str) -> tuple[Hashable, str | None]:
        self.log.append(("latest", session_id))
        return "turn-1", "what is new?"

    def on_effect(self, effect: fx.Effect) -> None:
        self.log.append(("core", effect))

    async def spawn(self, parent_id: str, effect: fx.SpawnSubAgents) -> None:
        self.log.append(("spawn", parent_id, effect))

    async def cancel(self, child_ids: tuple[str, ...]) -> None:
        self.log.append(("cancel", child_ids))

    async def view_start(self, session_id: str) -> int | None:
        self.log.append(("view_start", session_id))
        return None

    def hooks(self) -> CoreHooks:
        return CoreHooks(self.latest, self.on_effect, self.spawn, self.cancel, self.view_start)


async def test_the_root_builds_a_working_core_from_default_settings(database: Database) -> None:
    provider = ScriptedProvider([Reply("hello back")])
    parts = CoreParts(
        settings=CoreSettings(),
        database=database,
        providers=provider_lookup(provider),
        system_prompt=WorkspacePrompt(),
    )
    core = Core(parts)
    await core.start(maintenance=False)
    try:
        handle = await core.send(SessionAddress("local:ann", "default", "tui"), "hello")
        done = await handle.result()
        assert isinstance(done, TurnDone) and done.text == "hello back"
        (call,) = provider.calls
        assert call.messages[0].role is Role.SYSTEM  # the agent's workspace prompt
        assert call.messages[-1].text == "hello"
        offered = {t.name for t in call.options.tools or ()}
        assert "spawn_agents" in offered
        stored = await core.history(handle.session_id)
        assert [m.text for m in stored] == ["hello", "hello back"]
    finally:
        await core.stop()


async def test_the_runtime_is_frozen_and_has_the_core_hooks_from_the_start(
    database: Database,
) -> None:
    recorder = Recorder()
    parts = CoreParts(
        settings=CoreSettings(),
        database=database,
        providers=provider_lookup(ScriptedProvider()),
        system_prompt=StaticPrompt("be brief"),
        on_effect=lambda effect: recorder.log.append(("embedder", effect)),
    )
    rt = build_runtime(parts, recorder.hooks())
    with pytest.raises(dataclasses.FrozenInstanceError):
        rt.on_effect = recorder.on_effect  # type: ignore[misc]

    effect = fx.CancelOperation()
    rt.on_effect(effect)
    assert recorder.log == [("embedder", effect), ("core", effect)]  # the embedder's first

    session = SessionRef(session_id="s1", agent_id="default", user_id="ann", autonomy=Autonomy.FULL)
    recorder.log.clear()
    prompt = await rt.system_prompt(session, None)
    assert [m.text for m in prompt] == ["be brief"]
    assert recorder.log == [("latest", "s1")]  # the per-turn wrapper asks the core

    spawn = fx.SpawnSubAgents("call-1", (fx.SubAgentTask("child", "look"),))
    await rt.spawn("s1", spawn)
    await rt.cancel_children(("child",))
    assert recorder.log[1:] == [("spawn", "s1", spawn), ("cancel", ("child",))]


async def test_lane_ports_are_the_ports_of_one_conversation(database: Database) -> None:
    await database.migrate()
    provider = ScriptedProvider(capabilities=Capabilities(context_window=32_000))
    tools = ToolRegistry()
    tools.register(EchoTool())
    recorder = Recorder()
    vt = VirtualTime()
    parts = CoreParts(
        settings=CoreSettings.model_validate({"agentic_loop": {"stream_coalesce_ms": 20}}),
        clock=vt.clock,
        sleep=vt.sleep,
        database=database,
        providers=provider_lookup(provider),
        system_prompt=StaticPrompt("be brief"),
        tools=tools,
    )
    rt = build_runtime(parts, recorder.hooks())
    await rt.store.ensure("s1", agent_id="default", user_id="ann", channel="tui", now=1.0)
    session = SessionRef(session_id="s1", agent_id="default", user_id="ann", autonomy=Autonomy.FULL)
    published: list[TurnEvent] = []
    granted: list[str] = []
    submitted: list[tuple[str, bool]] = []

    async def grant(tool: str) -> None:
        granted.append(tool)

    async def compact(reason: str, window: int) -> CompactionDone:
        raise AssertionError("not compacting here")

    deps = lane_ports(
        rt,
        session=session,
        view=ViewCache(rt.store, "s1", new=True),
        last_activity_at=1.0,
        is_sub_agent=True,
        publish=published.append,
        wants_drafts=lambda: False,
        allow_tool=grant,
        compact=compact,
        submit=lambda result, ok: submitted.append((result, ok)),
    )

    assert deps.model.provider is provider
    assert (deps.model.context_window, deps.model.coalesce_seconds) == (32_000, 0.02)
    assert not deps.model.wants_stream()
    assert [t.name for t in deps.tools.definitions()] == ["echo", "submit_result"]
    result = await deps.tools.execute(ToolCall(id="c1", name="echo", args={"text": "hi"}))
    assert (result.content, result.is_error) == ("echo:hi", False)
    await deps.tools.allow("echo")
    assert granted == ["echo"]

    reply = Message.assistant("stored")
    await deps.log.commit(Idle(), [reply], now=2.0, consumed_runs=(), activity=False)
    assert [m.text for m in (await deps.log.view()).messages] == ["stored"]
    assert [m.text for m in (await rt.store.view("s1")).messages] == ["stored"]
    assert [m.text for m in await deps.log.system_prompt()] == ["be brief"]

    await deps.subagents.spawn(fx.SpawnSubAgents("call-1", ()))
    deps.subagents.submit("found it", True)
    assert recorder.log == [("latest", "s1"), ("spawn", "s1", fx.SpawnSubAgents("call-1", ()))]
    assert submitted == [("found it", True)]
    assert deps.clock.now() == vt.now
    nap = asyncio.create_task(deps.clock.sleep(5))
    await vt.until_timer(5)
    await vt.advance(5)
    await nap
    notice = TurnDone("s1", "t1", text="ok")
    deps.events.publish(notice)
    assert published == [notice]
