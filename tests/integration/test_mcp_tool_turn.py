"""A real MCP server's tool used by the model in a turn through the real loop.

``mcp-server-time`` (PyPI) runs over stdio under the MCP manager, its tools enter the
tool registry, and a scripted provider calls ``get_current_time`` and answers with the
result it was sent.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import ToolFinished, TurnDone
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_mcp import MCPManager, MCPSettings
from beamclaw_memory import Database
from beamclaw_tools import ToolRegistry

from .conftest import ADDRESS, core_settings

SERVER = str(Path(sys.executable).with_name("mcp-server-time"))


def _answer(messages: Sequence[Message], options: CompletionOptions) -> Reply:
    result = json.loads(messages[-1].text)
    return Reply(f"In {result['timezone']} it is {result['datetime']}.")


async def test_the_model_calls_an_mcp_tool_and_answers_with_its_result(tmp_path: Path) -> None:
    registry = ToolRegistry()
    manager = MCPManager(
        MCPSettings.model_validate({"servers": [{"name": "time", "command": SERVER}]}),
        sink=registry,
    )
    provider = ScriptedProvider([CallTool("get_current_time", {"timezone": "UTC"}), _answer])
    db = Database(f"sqlite:///{tmp_path / 'mcp.db'}")
    core = Core.create(core_settings(), db, provider=provider, tools=registry, system_prompt="test")
    manager.start()
    try:
        assert await manager.wait_up("time", 60), manager.status()
        await core.start(maintenance=False)
        handle = await core.send(ADDRESS, "What time is it in UTC?")
        events = [e async for e in handle.events()]
        history = await core.history(handle.session_id)
    finally:
        await core.stop()
        await manager.stop()
        await db.dispose()

    offered = {t.name: t for t in provider.calls[0].options.tools}
    assert offered["get_current_time"].source == "mcp:time"
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    assert (finished.tool, finished.is_error) == ("get_current_time", False)
    call_message, result_message = history[1], history[2]
    (call,) = call_message.tool_calls
    assert result_message.role is Role.TOOL
    assert (result_message.tool_call_id, result_message.name) == (call.id, "get_current_time")
    assert not result_message.is_error
    data: dict[str, Any] = json.loads(result_message.text)
    assert data["timezone"] == "UTC"
    # the provider's second request carries the result right after the call
    second = provider.calls[1].messages
    assert second[-2].tool_calls == call_message.tool_calls
    assert second[-1].role is Role.TOOL and second[-1].tool_call_id == call.id
    assert second[-1].text == result_message.text
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.text == f"In UTC it is {data['datetime']}."
