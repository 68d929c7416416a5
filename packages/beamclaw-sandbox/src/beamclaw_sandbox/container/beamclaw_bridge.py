"""BeamClaw's tools from inside the sandbox (this file is ``/tools/beamclaw_bridge.py``).

    from beamclaw_bridge import call_tool, search_tools, get_tool_schema
    print(search_tools("time"))
    print(call_tool("get_current_time", timezone="UTC"))

Every call goes to the gateway over the Unix socket ``$BEAMCLAW_BRIDGE`` (length-prefixed
JSON-RPC 2.0) and passes the tool policy and the session's approvals there. Each thread
uses its own connection, so threads may call tools concurrently. A refused or failed call
raises :class:`ToolError`. Standard library only.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import threading
from typing import Any

__all__ = ["BridgeError", "ToolError", "call_tool", "get_tool_schema", "search_tools"]


class BridgeError(Exception):
    """The bridge refused the request (bad token, denied tool, unknown method …)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class ToolError(Exception):
    """The tool ran and reported an error; the message is its output."""


class _Connection:
    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(os.environ.get("BEAMCLAW_BRIDGE", "/run/beamclaw/bridge.sock"))
        self._ids = itertools.count(1)

    def request(self, method: str, params: dict[str, Any]) -> Any:
        params = {**params, "token": os.environ.get("BEAMCLAW_BRIDGE_TOKEN", "")}
        body = json.dumps(
            {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        ).encode()
        self._sock.sendall(len(body).to_bytes(4, "big") + body)
        size = int.from_bytes(self._read(4), "big")
        answer: dict[str, Any] = json.loads(self._read(size))
        if "error" in answer:
            raise BridgeError(int(answer["error"]["code"]), str(answer["error"]["message"]))
        return answer["result"]

    def _read(self, n: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < n:
            chunk = self._sock.recv(n - len(chunks))
            if not chunk:
                raise BridgeError(-32000, "the bridge closed the connection")
            chunks.extend(chunk)
        return bytes(chunks)


_local = threading.local()


def _connection() -> _Connection:
    conn: _Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = _Connection()
        _local.conn = conn
    return conn


def search_tools(query: str = "") -> list[dict[str, str]]:
    """Tools whose name or description contains ``query`` (all when empty)."""
    found: list[dict[str, str]] = _connection().request("search_tools", {"query": query})
    return found


def get_tool_schema(name: str) -> dict[str, Any]:
    """``{"name", "description", "parameters"}`` of one tool."""
    schema: dict[str, Any] = _connection().request("get_tool_schema", {"name": name})
    return schema


def call_tool(name: str, **arguments: Any) -> str:
    """Run a tool with keyword arguments; its text output (raises :class:`ToolError`)."""
    result: dict[str, Any] = _connection().request(
        "call_tool", {"name": name, "arguments": arguments}
    )
    if result.get("is_error"):
        raise ToolError(str(result.get("content", "")))
    return str(result.get("content", ""))
