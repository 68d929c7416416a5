"""The MCP host against real stdio servers: mcp-server-time, mcp-server-git (PyPI) and the
scripted fixture server (SDK low-level Server)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from beamclaw_mcp import (
    MCPCallTimeoutError,
    MCPConnectionLostError,
    MCPServerUnavailableError,
    MCPUnknownServerError,
    MCPUnknownToolError,
    RecordingToolSink,
    ServerState,
)
from beamclaw_obs import HealthState
from beamclaw_tools import Autonomy, ImagePart, SessionRef

SESSION = SessionRef(session_id="s1", agent_id="default")
SETTLE = 60.0


async def test_discovery_and_calls_on_pypi_servers(host: Any, servers: Any, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(repo)], check=True)
    sink = RecordingToolSink()
    manager = host(servers.settings(servers.time(), servers.git(repo)), sink)
    assert await manager.wait_settled(SETTLE)
    by_name = {st.name: st for st in manager.status()}
    assert by_name["time"].state is ServerState.UP
    assert by_name["time"].tools == ("convert_time", "get_current_time")
    assert by_name["git"].state is ServerState.UP
    assert "git_status" in by_name["git"].tools
    assert by_name["time"].server_name == "mcp-time"
    names = {d.name for d in sink.definitions()}
    assert {"get_current_time", "convert_time", "git_status", "git_log"} <= names
    definition = sink.tools["get_current_time"].definition
    assert definition.source == "mcp:time"
    assert definition.parameters["type"] == "object"
    assert "timezone" in definition.parameters["properties"]

    out = await sink.tools["get_current_time"].execute({"timezone": "Etc/UTC"}, SESSION)
    assert not out.is_error
    assert out.structured is not None
    assert out.structured["timezone"] == "Etc/UTC"
    assert '"timezone": "Etc/UTC"' in out.content

    status = await sink.tools["git_status"].execute({"repo_path": str(repo)}, SESSION)
    assert not status.is_error
    assert "branch" in status.content.lower()

    bad = await sink.tools["get_current_time"].execute({"timezone": "Not/AZone"}, SESSION)
    assert bad.is_error
    assert "Not/AZone" in bad.content

    health = manager.health()
    assert health.state is HealthState.UP
    assert health.data["servers"]["time"]["tool_count"] == 2


async def test_start_returns_before_servers_are_up(host: Any, servers: Any) -> None:
    manager = host(servers.settings(servers.time()))
    assert manager.status()[0].state is ServerState.STARTING
    assert manager.health().state is HealthState.STARTING
    with pytest.raises(MCPServerUnavailableError, match="starting"):
        await manager.call_tool("time", "get_current_time", {"timezone": "UTC"})
    assert await manager.wait_up("time", SETTLE)


async def test_pagination_images_structured_errors_and_schemas(host: Any, servers: Any) -> None:
    sink = RecordingToolSink()
    manager = host(servers.settings(servers.scripted()), sink)
    assert await manager.wait_up("fx", SETTLE)
    # nine tools, listed two per page
    assert manager.server_status("fx").tool_count == 9
    image = await sink.tools["image"].execute({}, SESSION)
    assert image.content == "a pixel:\n[image: image/png]"
    assert len(image.parts) == 1
    assert isinstance(image.parts[0], ImagePart)
    assert image.parts[0].media_type == "image/png"
    broken = await sink.tools["broken"].execute({}, SESSION)
    assert broken.is_error
    assert broken.content == "it broke"
    structured = await sink.tools["structured"].execute({}, SESSION)
    assert structured.structured == {"answer": 42}
    assert "42" in structured.content
    weird = sink.tools["weird_schema"].definition
    assert weird.parameters == {
        "type": "object",
        "properties": {"a": {}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    assert (await sink.tools["weird_schema"].execute({}, SESSION)).content == "unknown weird.schema"
    assert sink.tools["echo"].definition.min_autonomy is Autonomy.SUPERVISED


async def test_huge_result_is_truncated(host: Any, servers: Any) -> None:
    entry = {**servers.scripted(), "max_result_chars": 1000}
    manager = host(servers.settings(entry))
    assert await manager.wait_up("fx", SETTLE)
    out = await manager.call_tool("fx", "huge", {"chars": 3_000_000})
    assert out.content.startswith("x" * 1000)
    assert "2999000 of 3000000 characters omitted" in out.content
    assert len(out.content) < 1100


async def test_list_changed_refreshes_the_registry(host: Any, servers: Any) -> None:
    sink = RecordingToolSink()
    manager = host(servers.settings(servers.scripted()), sink)
    assert await manager.wait_up("fx", SETTLE)
    assert "extra" not in sink.tools
    assert (await manager.call_tool("fx", "grow", {})).content == "grown"
    for _ in range(500):
        if "extra" in sink.tools:
            break
        await asyncio.sleep(0.01)
    assert (await sink.tools["extra"].execute({}, SESSION)).content == "extra!"
    assert manager.server_status("fx").tool_count == 10


async def test_call_timeout_cancels_on_the_server(host: Any, servers: Any, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    manager = host(servers.settings(servers.scripted(FIXTURE_CANCEL_FILE=str(marker))))
    assert await manager.wait_up("fx", SETTLE)
    with pytest.raises(MCPCallTimeoutError, match=r"timed out after 0\.3s"):
        await manager.call_tool("fx", "slow", {"seconds": 30}, timeout_seconds=0.3)
    for _ in range(500):
        if marker.exists():
            break
        await asyncio.sleep(0.01)
    assert marker.read_text() == "cancelled"  # notifications/cancelled reached the server
    assert (await manager.call_tool("fx", "echo", {"text": "still fine"})).content == ("still fine")


async def test_cancelling_the_caller_sends_notifications_cancelled(
    host: Any, servers: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    manager = host(servers.settings(servers.scripted(FIXTURE_CANCEL_FILE=str(marker))))
    assert await manager.wait_up("fx", SETTLE)
    call = asyncio.create_task(manager.call_tool("fx", "slow", {"seconds": 30}))
    await asyncio.sleep(0.3)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    for _ in range(500):
        if marker.exists():
            break
        await asyncio.sleep(0.01)
    assert marker.read_text() == "cancelled"


async def test_server_killed_mid_call_fails_typed_then_recovers(
    host: Any, servers: Any, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    sink = RecordingToolSink()
    manager = host(servers.settings(servers.scripted(FIXTURE_PID_FILE=str(pid_file))), sink)
    assert await manager.wait_up("fx", SETTLE)
    call = asyncio.create_task(manager.call_tool("fx", "slow", {"seconds": 30}))
    await asyncio.sleep(0.3)
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    with pytest.raises(MCPConnectionLostError, match="during tool 'slow'"):
        await asyncio.wait_for(call, 10)
    # the tool stays registered while the server restarts; then it works again
    assert "echo" in sink.tools
    for _ in range(3000):
        st = manager.server_status("fx")
        if st.state is ServerState.UP and st.restarts >= 1:
            break
        await asyncio.sleep(0.01)
    st = manager.server_status("fx")
    assert st.state is ServerState.UP
    assert st.restarts == 1
    assert st.last_error is not None
    assert "connection lost" in st.last_error
    assert (await sink.tools["echo"].execute({"text": "back"}, SESSION)).content == "back"


async def test_crash_during_call_reports_through_the_tool(host: Any, servers: Any) -> None:
    sink = RecordingToolSink()
    manager = host(servers.settings(servers.scripted()), sink)
    assert await manager.wait_up("fx", SETTLE)
    out = await sink.tools["die"].execute({}, SESSION)
    assert out.is_error
    assert "connection lost during tool 'die'" in out.content


async def test_down_server_fails_fast(host: Any, servers: Any, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    cfg = servers.settings(
        servers.scripted(FIXTURE_PID_FILE=str(pid_file)),
        backoff_initial_seconds=30.0,
        backoff_max_seconds=30.0,
    )
    sink = RecordingToolSink()
    manager = host(cfg, sink)
    assert await manager.wait_up("fx", SETTLE)
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    for _ in range(1000):
        if manager.server_status("fx").state is ServerState.RESTARTING:
            break
        await asyncio.sleep(0.01)
    assert manager.server_status("fx").state is ServerState.RESTARTING
    with pytest.raises(MCPServerUnavailableError, match="restarting"):
        await manager.call_tool("fx", "echo", {"text": "x"})
    out = await sink.tools["echo"].execute({"text": "x"}, SESSION)
    assert out.is_error
    assert "server is restarting" in out.content
    assert manager.health().state is HealthState.DEGRADED


async def test_missing_command_fails_at_once_without_touching_others(
    host: Any, servers: Any
) -> None:
    cfg = servers.settings(
        {"name": "ghost", "command": "/nonexistent/mcp-server-ghost"}, servers.time()
    )
    manager = host(cfg)
    assert await manager.wait_settled(SETTLE)
    ghost, time_st = manager.status()
    assert ghost.state is ServerState.FAILED
    assert ghost.restarts == 0
    assert "command not found: /nonexistent/mcp-server-ghost" in (ghost.last_error or "")
    assert time_st.state is ServerState.UP
    out = await manager.call_tool("time", "get_current_time", {"timezone": "UTC"})
    assert not out.is_error
    health = manager.health()
    assert health.state is HealthState.DEGRADED
    assert "ghost" in health.detail


async def test_server_that_never_answers_initialize_is_marked_failed(
    host: Any, servers: Any
) -> None:
    cfg = servers.settings(
        {**servers.broken("mute", "silent"), "initialize_timeout_seconds": 0.3},
        servers.time(),
        max_restarts=1,
    )
    manager = host(cfg)
    assert await manager.wait_settled(SETTLE)
    mute = manager.server_status("mute")
    assert mute.state is ServerState.FAILED
    assert "initialize timed out after 0.3s" in (mute.last_error or "")
    assert manager.server_status("time").state is ServerState.UP


async def test_invalid_json_rpc_is_reported(host: Any, servers: Any) -> None:
    cfg = servers.settings(
        {**servers.broken("noisy", "garbage"), "initialize_timeout_seconds": 3.0},
        max_restarts=0,
    )
    manager = host(cfg)
    assert await manager.wait_settled(SETTLE)
    noisy = manager.server_status("noisy")
    assert noisy.state is ServerState.FAILED
    assert "invalid JSON-RPC from server" in (noisy.last_error or "")


async def test_disabled_server_is_listed_not_started(host: Any, servers: Any) -> None:
    manager = host(servers.settings({**servers.time(), "enabled": False}))
    assert manager.status()[0].state is ServerState.DISABLED
    assert await manager.wait_settled(1.0)
    assert manager.health().state is HealthState.UP
    with pytest.raises(MCPServerUnavailableError, match="disabled"):
        await manager.call_tool("time", "get_current_time", {})


async def test_unknown_server_and_tool(host: Any, servers: Any) -> None:
    manager = host(servers.settings(servers.time()))
    assert await manager.wait_up("time", SETTLE)
    with pytest.raises(MCPUnknownServerError):
        await manager.call_tool("nope", "x", {})
    with pytest.raises(MCPUnknownToolError, match="no tool 'nope'"):
        await manager.call_tool("time", "nope", {})


async def test_collisions_are_qualified(host: Any, servers: Any) -> None:
    sink = RecordingToolSink(reserved={"get_current_time"})
    cfg = servers.settings(
        servers.time("t1"), servers.time("t2"), {**servers.git(Path.cwd()), "enabled": False}
    )
    manager = host(cfg, sink)
    assert await manager.wait_settled(SETTLE)
    names = set(sink.tools)
    assert names == {
        "t1__convert_time",
        "t1__get_current_time",
        "t2__convert_time",
        "t2__get_current_time",
    }
    assert sink.tools["t2__convert_time"].definition.source == "mcp:t2"


async def test_builtin_name_clash_falls_back_to_qualified(host: Any, servers: Any) -> None:
    sink = RecordingToolSink(reserved={"get_current_time"})
    manager = host(servers.settings(servers.time()), sink)
    assert await manager.wait_up("time", SETTLE)
    assert set(sink.tools) == {"convert_time", "time__get_current_time"}
    out = await sink.tools["time__get_current_time"].execute({"timezone": "UTC"}, SESSION)
    assert not out.is_error


async def test_grants_hide_and_refuse_tools(host: Any, servers: Any) -> None:
    cfg = servers.settings({**servers.time(), "agents": ["timekeeper"]})
    sink = RecordingToolSink()
    manager = host(cfg, sink)
    assert await manager.wait_up("time", SETTLE)
    assert manager.definitions("default") == []
    assert {d.name for d in manager.definitions("timekeeper")} == {
        "convert_time",
        "get_current_time",
    }
    denied = await sink.tools["get_current_time"].execute({"timezone": "UTC"}, SESSION)
    assert denied.is_error
    assert "not granted MCP server 'time'" in denied.content
    keeper = SessionRef(session_id="s", agent_id="timekeeper")
    allowed = await sink.tools["get_current_time"].execute({"timezone": "UTC"}, keeper)
    assert not allowed.is_error


async def test_stop_unregisters_tools_and_restart_revives_failed(host: Any, servers: Any) -> None:
    sink = RecordingToolSink()
    manager = host(servers.settings(servers.time()), sink)
    assert await manager.wait_up("time", SETTLE)
    assert sink.tools
    await manager.restart_server("time")
    assert await manager.wait_settled(SETTLE)
    assert manager.server_status("time").state is ServerState.UP
    await manager.stop()
    assert sink.tools == {}
    assert manager.server_status("time").state is ServerState.STOPPED
