"""``beamclaw mcp list|tools|call`` through a real process, against mcp-server-time."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
import typer

from beamclaw_cli.app import COMMAND_MODULES
from beamclaw_cli.commands import mcp as mcp_command

VENV_BIN = Path(sys.executable).parent
# Until "mcp" is listed in COMMAND_MODULES the group is registered on the real app here.
_HARNESS = (
    "import sys, importlib; a = importlib.import_module('beamclaw_cli.app'); "
    "a = sys.modules['beamclaw_cli.app']; from beamclaw_cli.commands import mcp; "
    "mcp.register(a.app); sys.exit(a.main(sys.argv[1:]))"
)


def _command() -> list[str]:
    if "mcp" in COMMAND_MODULES:
        return [str(VENV_BIN / "beamclaw")]
    return [sys.executable, "-c", _HARNESS]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def config(tmp_path: Path) -> tuple[Path, int]:
    port = _free_port()
    path = tmp_path / "beamclaw.toml"
    path.write_text(
        f"""
[gateway.http]
port = {port}

[[mcp.servers]]
name = "time"
command = "{VENV_BIN / "mcp-server-time"}"

[[mcp.servers]]
name = "ghost"
command = "/nonexistent/ghost-server"
"""
    )
    return path, port


def run(config_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BEAMCLAW_CONFIG": str(config_path)}
    return subprocess.run(
        [*_command(), *args], capture_output=True, text=True, env=env, timeout=90, check=False
    )


def test_list_starts_servers_from_config(config: tuple[Path, int]) -> None:
    proc = run(config[0], "mcp", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["source"] == "started from config"
    by_name = {s["name"]: s for s in body["servers"]}
    assert by_name["time"]["state"] == "up"
    assert by_name["time"]["tool_count"] == 2
    assert by_name["ghost"]["state"] == "failed"
    assert "command not found" in by_name["ghost"]["last_error"]
    table = run(config[0], "mcp", "list")
    assert table.returncode == 0
    assert "time" in table.stdout
    assert "failed" in table.stdout


def test_tools_lists_what_the_model_sees(config: tuple[Path, int]) -> None:
    proc = run(config[0], "mcp", "tools", "time", "--json")
    assert proc.returncode == 0, proc.stderr
    defs = json.loads(proc.stdout)
    assert sorted(d["name"] for d in defs) == ["convert_time", "get_current_time"]
    assert {d["source"] for d in defs} == {"mcp:time"}
    plain = run(config[0], "mcp", "tools")
    assert "get_current_time" in plain.stdout
    assert "server ghost is failed" in plain.stderr


def test_call_prints_the_result(config: tuple[Path, int]) -> None:
    proc = run(
        config[0], "mcp", "call", "time", "get_current_time", "--args", '{"timezone": "UTC"}'
    )
    assert proc.returncode == 0, proc.stderr
    assert '"timezone": "UTC"' in proc.stdout
    as_json = run(
        config[0],
        "mcp",
        "call",
        "time",
        "get_current_time",
        "--args",
        '{"timezone": "UTC"}',
        "--json",
    )
    assert json.loads(as_json.stdout)["structured"]["timezone"] == "UTC"


def test_call_errors_exit_nonzero(config: tuple[Path, int]) -> None:
    bad_zone = run(
        config[0], "mcp", "call", "time", "get_current_time", "--args", '{"timezone": "X/Y"}'
    )
    assert bad_zone.returncode == 1
    assert "X/Y" in bad_zone.stdout
    bad_json = run(config[0], "mcp", "call", "time", "get_current_time", "--args", "{nope")
    assert bad_json.returncode == 2
    assert "--args is not valid JSON" in bad_json.stderr
    unknown = run(config[0], "mcp", "call", "nope", "x")
    assert unknown.returncode == 2
    assert "no MCP server 'nope'" in unknown.stderr
    ghost = run(config[0], "mcp", "call", "ghost", "x")
    assert ghost.returncode == 1
    assert "server is failed" in ghost.stderr


@pytest.fixture
def fake_gateway(config: tuple[Path, int]) -> Iterator[None]:
    """A loopback HTTP server answering /health as a gateway with MCP status would."""
    health: dict[str, Any] = {
        "status": "up",
        "components": {
            "mcp": {
                "status": "up",
                "servers": {
                    "remote": {
                        "name": "remote",
                        "state": "up",
                        "transport": "stdio",
                        "tool_count": 7,
                        "restarts": 2,
                        "last_error": None,
                    },
                },
            }
        },
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = json.dumps(health).encode()
            self.send_response(200 if self.path == "/health" else 404)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return

    server = HTTPServer(("127.0.0.1", config[1]), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield
    server.shutdown()
    server.server_close()


def test_list_prefers_a_running_gateway(config: tuple[Path, int], fake_gateway: None) -> None:
    proc = run(config[0], "mcp", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["source"] == "running gateway"
    assert body["servers"][0]["name"] == "remote"
    local = json.loads(run(config[0], "mcp", "list", "--json", "--local").stdout)
    assert local["source"] == "started from config"


def test_register_adds_the_group_to_any_app() -> None:
    app = typer.Typer()
    mcp_command.register(app)
    names = {g.name for g in app.registered_groups}
    assert names == {"mcp"}
