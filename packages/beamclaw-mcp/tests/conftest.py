"""Fixtures for the beamclaw-mcp tests: fast ``[mcp]`` settings, the real PyPI servers,
the scripted fixture server, and the npm ``server-everything`` (stdio and HTTP modes)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from beamclaw_mcp import MCPManager, MCPSettings, RecordingToolSink
from beamclaw_mcp.testing import broken_server_entry, scripted_server_entry

REPO = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent
EVERYTHING = REPO / "tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

FAST: dict[str, Any] = {
    "initialize_timeout_seconds": 20.0,
    "backoff_initial_seconds": 0.05,
    "backoff_max_seconds": 0.2,
    "restart_window_seconds": 60.0,
}


class Servers:
    """Builders for ``[[mcp.servers]]`` entries and ``[mcp]`` sections."""

    @staticmethod
    def settings(*servers: dict[str, Any], **overrides: Any) -> MCPSettings:
        return MCPSettings.model_validate({**FAST, **overrides, "servers": list(servers)})

    @staticmethod
    def scripted(name: str = "fx", **env: str) -> dict[str, Any]:
        return scripted_server_entry(name, **env)

    @staticmethod
    def broken(name: str, mode: str) -> dict[str, Any]:
        return broken_server_entry(name, mode)

    @staticmethod
    def time(name: str = "time") -> dict[str, Any]:
        return {"name": name, "command": str(VENV_BIN / "mcp-server-time")}

    @staticmethod
    def git(repo: Path, name: str = "git") -> dict[str, Any]:
        return {
            "name": name,
            "command": str(VENV_BIN / "mcp-server-git"),
            "args": ["--repository", str(repo)],
        }

    @staticmethod
    def everything_stdio(name: str = "everything") -> dict[str, Any]:
        node, script = node_everything()
        return {"name": name, "command": node, "args": [script, "stdio"]}


@pytest.fixture
def servers() -> type[Servers]:
    return Servers


@pytest.fixture
async def host() -> AsyncIterator[Callable[..., MCPManager]]:
    """Start an MCPManager (with a RecordingToolSink) and always stop it afterwards."""
    managers: list[MCPManager] = []

    def make(settings: MCPSettings, sink: Any = None) -> MCPManager:
        manager = MCPManager(settings, sink=sink if sink is not None else RecordingToolSink())
        managers.append(manager)
        manager.start()
        return manager

    yield make
    for manager in managers:
        await manager.stop()


def node_everything() -> tuple[str, str]:
    node = shutil.which("node")
    if node is None or not EVERYTHING.is_file():
        pytest.fail(
            "node and tests/node/node_modules are required (cd tests/node && npm ci); "
            "`make test` installs them"
        )
    return node, str(EVERYTHING)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


class NodeHttpServer:
    """server-everything in an HTTP mode on a loopback port; can be killed and restarted."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        node, script = node_everything()
        self.proc = subprocess.Popen(
            [node, script, self.mode],
            env={"PORT": str(self.port), "PATH": "/usr/local/bin:/usr/bin:/bin"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_port(self.port)

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    @property
    def url(self) -> str:
        path = "/mcp" if self.mode == "streamableHttp" else "/sse"
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def node_http() -> Iterator[Callable[[str], NodeHttpServer]]:
    started: list[NodeHttpServer] = []

    def make(mode: str) -> NodeHttpServer:
        server = NodeHttpServer(mode)
        server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.kill()
