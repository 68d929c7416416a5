"""A tool turn through the real provider chain (OpenAI wire over HTTP) and the fake
OpenAI server: the second request carries the assistant's tool call and its result."""

from __future__ import annotations

import json
from pathlib import Path

from beamclaw_core.api import Core
from beamclaw_core.loop import TurnDone
from beamclaw_core.providers import ProviderSettings, build_provider_chain
from beamclaw_core.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from beamclaw_memory import Database
from beamclaw_tools import ToolRegistry, ToolsSettings

from .conftest import ADDRESS, core_settings


async def test_tool_step_round_trips_through_the_openai_wire(tmp_path: Path) -> None:
    script = [
        FakeReply(
            "Let me think.",
            tool_calls=(FakeToolCall("think", {"thought": "plan the answer"}, id="call_42"),),
        ),
        FakeReply("Here is the plan."),
    ]
    async with FakeOpenAIServer(script) as fake:
        provider = build_provider_chain(
            "fake",
            {"fake": ProviderSettings(kind="openai", base_url=fake.base_url, model="fake-model")},
        )
        db = Database(f"sqlite:///{tmp_path / 'chain.db'}")
        core = Core.create(
            core_settings(),
            db,
            provider=provider,
            tools=ToolRegistry.with_builtins(ToolsSettings()),
            system_prompt="You plan things.",
        )
        await core.start(maintenance=False)
        try:
            handle = await core.send(ADDRESS, "Make a plan")
            done = await handle.result()
        finally:
            await core.stop()
            await provider.close()
            await db.dispose()
        bodies = fake.bodies
    assert isinstance(done, TurnDone)
    assert done.text.endswith("Here is the plan.")
    assert len(bodies) == 2
    assert any(t["function"]["name"] == "think" for t in bodies[0]["tools"])
    messages = bodies[1]["messages"]
    assert messages[0] == {"role": "system", "content": "You plan things."}
    assistant, tool = messages[-2], messages[-1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "Let me think."
    (call,) = assistant["tool_calls"]
    assert call["id"] == "call_42"
    assert call["type"] == "function"
    assert call["function"]["name"] == "think"
    assert json.loads(call["function"]["arguments"]) == {"thought": "plan the answer"}
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_42"
    assert tool["name"] == "think"
    assert tool["content"]
