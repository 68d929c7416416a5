"""The MCP host against @modelcontextprotocol/server-everything (npm): stdio, streamable
HTTP and legacy SSE, including a server killed mid-call and its recovery."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from beamclaw_mcp import (
    MCPConnectionLostError,
    MCPProtocolError,
    MCPServerUnavailableError,
    RecordingToolSink,
    ServerState,
)
from beamclaw_tools import SessionRef

pytestmark = pytest.mark.node

SESSION = SessionRef(session_id="s1", agent_id="default")
SETTLE = 60.0


async def _wait_tool(sink: RecordingToolSink, name: str) -> None:
    for _ in range(1000):
        if name in sink.tools:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} never registered; have {sorted(sink.tools)}")


async def test_everything_over_stdio(host: Any, servers: Any) -> None:
    sink = RecordingToolSink()
    manager = host(servers.settings(servers.everything_stdio()), sink)
    assert await manager.wait_up("everything", SETTLE)
    status = manager.server_status("everything")
    assert status.server_name == "mcp-servers/everything"
    assert {"echo", "get-tiny-image", "get-sum"} <= set(status.tools)
    echo = await sink.tools["echo"].execute({"message": "hello"}, SESSION)
    assert not echo.is_error
    assert "hello" in echo.content
    image = await sink.tools["get-tiny-image"].execute({}, SESSION)
    assert [p.media_type for p in image.parts] == ["image/png"]
    assert "[image: image/png]" in image.content
    total = await sink.tools["get-sum"].execute({"a": 2, "b": 3}, SESSION)
    assert "5" in total.content
    structured = await sink.tools["get-structured-content"].execute(
        {"location": "New York"}, SESSION
    )
    assert structured.structured is not None
    assert not structured.is_error
    for definition in sink.definitions():
        assert definition.parameters["type"] == "object"
        assert definition.source == "mcp:everything"


async def test_everything_over_streamable_http(host: Any, servers: Any, node_http: Any) -> None:
    server = node_http("streamableHttp")
    sink = RecordingToolSink()
    entry = {"name": "web", "url": server.url, "headers": {"X-Test": "1"}}
    manager = host(servers.settings(entry), sink)
    assert await manager.wait_up("web", SETTLE)
    assert manager.server_status("web").transport == "streamable_http"
    await _wait_tool(sink, "get-tiny-image")
    image = await sink.tools["get-tiny-image"].execute({}, SESSION)
    assert image.parts
    assert image.parts[0].media_type == "image/png"
    echo = await sink.tools["echo"].execute({"message": "over http"}, SESSION)
    assert "over http" in echo.content


async def test_everything_over_legacy_sse(host: Any, servers: Any, node_http: Any) -> None:
    server = node_http("sse")
    sink = RecordingToolSink()
    entry = {"name": "legacy", "url": server.url, "transport": "sse"}
    manager = host(servers.settings(entry), sink)
    assert await manager.wait_up("legacy", SETTLE)
    echo = await sink.tools["echo"].execute({"message": "over sse"}, SESSION)
    assert "over sse" in echo.content


async def test_http_server_killed_mid_call_then_recovers(
    host: Any, servers: Any, node_http: Any
) -> None:
    server = node_http("streamableHttp")
    sink = RecordingToolSink()
    cfg = servers.settings(
        {"name": "web", "url": server.url, "call_timeout_seconds": 15.0},
        ping_interval_seconds=0.3,
        initialize_timeout_seconds=2.0,
        max_restarts=50,
    )
    manager = host(cfg, sink)
    assert await manager.wait_up("web", SETTLE)
    call = asyncio.create_task(
        manager.call_tool("web", "trigger-long-running-operation", {"duration": 10, "steps": 2})
    )
    await asyncio.sleep(0.5)
    server.kill()
    with pytest.raises((MCPConnectionLostError, MCPProtocolError)):
        await asyncio.wait_for(call, 20)
    for _ in range(2000):
        if manager.server_status("web").state is not ServerState.UP:
            break
        await asyncio.sleep(0.01)
    with pytest.raises(MCPServerUnavailableError):
        await manager.call_tool("web", "echo", {"message": "x"})
    server.start()  # same port
    for _ in range(6000):
        if manager.server_status("web").state is ServerState.UP:
            break
        await asyncio.sleep(0.01)
    assert manager.server_status("web").state is ServerState.UP
    assert manager.server_status("web").restarts >= 1
    echo = await sink.tools["echo"].execute({"message": "back"}, SESSION)
    assert "back" in echo.content


async def test_one_failing_server_does_not_affect_another(host: Any, servers: Any) -> None:
    cfg = servers.settings(
        servers.everything_stdio(),
        {"name": "down", "url": "http://127.0.0.1:9/mcp", "initialize_timeout_seconds": 1.0},
        max_restarts=1,
    )
    sink = RecordingToolSink()
    manager = host(cfg, sink)
    assert await manager.wait_settled(SETTLE)
    assert manager.server_status("down").state is ServerState.FAILED
    assert "closed before the handshake completed" in (
        manager.server_status("down").last_error or ""
    )
    echo = await sink.tools["echo"].execute({"message": "fine"}, SESSION)
    assert "fine" in echo.content
