"""MCP tools inside the real ``beamclaw_tools.ToolRegistry`` (the model-facing path)."""

from __future__ import annotations

from typing import Any

from beamclaw_tools import SessionRef, ToolCall, ToolDef, ToolOutput, ToolPolicy, ToolRegistry

SESSION = SessionRef(session_id="s1", agent_id="default")


class _Builtin:
    """A stand-in built-in tool whose name collides with an MCP tool."""

    @property
    def definition(self) -> ToolDef:
        return ToolDef(name="get_current_time", description="builtin clock")

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        return ToolOutput.ok("builtin")


async def test_mcp_tools_run_through_the_registry(host: Any, servers: Any) -> None:
    registry = ToolRegistry()
    registry.register(_Builtin())
    manager = host(
        servers.settings(servers.time(), {**servers.scripted(), "agents": ["ops"]}), registry
    )
    assert await manager.wait_settled(60.0)
    names = set(registry.names())
    assert {"get_current_time", "time__get_current_time", "convert_time", "echo"} <= names
    assert registry.get("get_current_time").definition.source == "builtin"  # type: ignore[union-attr]

    result = await registry.execute(
        ToolCall(id="c1", name="time__get_current_time", args={"timezone": "UTC"}), SESSION
    )
    assert not result.is_error
    assert result.structured is not None
    assert result.structured["timezone"] == "UTC"

    # grants: the scripted server is only for "ops"
    denied = await registry.execute(ToolCall(id="c3", name="echo", args={"text": "x"}), SESSION)
    assert denied.is_error
    assert "not granted" in denied.content
    policy = ToolPolicy(deny=tuple(manager.denied_tool_names("default")))
    visible = {d.name for d in registry.definitions(policy)}
    assert "echo" not in visible
    assert "convert_time" in visible
    ops = SessionRef(session_id="s2", agent_id="ops")
    echoed = await registry.execute(ToolCall(id="c4", name="echo", args={"text": "hi"}), ops)
    assert echoed.content == "hi"
    image = await registry.execute(ToolCall(id="c2", name="image", args={}), ops)
    assert image.parts[0].media_type == "image/png"

    # huge results keep exactly one marker through both caps
    huge = await registry.execute(ToolCall(id="c5", name="huge", args={"chars": 500_000}), ops)
    assert huge.content.count("characters omitted") == 1

    await manager.stop()
    assert not any(n in registry.names() for n in ("convert_time", "echo", "image"))
    assert manager.denied_tool_names("default") == []  # kept per agent, not past a change
    assert manager.tools() == []
    assert "get_current_time" in registry.names()
