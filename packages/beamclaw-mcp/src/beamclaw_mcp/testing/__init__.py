"""Test doubles for code that uses the MCP host.

* :mod:`beamclaw_mcp.testing.scripted_server` — a real stdio MCP server (SDK low-level
  ``Server``) with tools that return images, huge text, errors, structured content, sleep,
  change the tool list, or crash.
* :mod:`beamclaw_mcp.testing.broken_server` — a process that never answers ``initialize``
  or writes invalid JSON-RPC; :func:`broken_server_entry` runs it.
* :func:`scripted_server_entry` — a ``[[mcp.servers]]`` entry that runs it.
* :class:`~beamclaw_mcp.types.RecordingToolSink` — an in-memory tool registry.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from beamclaw_mcp.types import RecordingToolSink


def scripted_server_entry(name: str = "fx", **env: str) -> dict[str, Any]:
    """A server entry (as a dict for ``MCPSettings``) running the scripted server."""
    return {
        "name": name,
        "command": sys.executable,
        "args": ["-m", "beamclaw_mcp.testing.scripted_server"],
        "env": dict(env),
    }


def broken_server_entry(name: str, mode: str) -> dict[str, Any]:
    """A server entry running ``broken_server`` in ``mode`` (``silent`` | ``garbage``)."""
    script = Path(__file__).with_name("broken_server.py")
    return {"name": name, "command": sys.executable, "args": [str(script), mode]}


__all__ = ["RecordingToolSink", "broken_server_entry", "scripted_server_entry"]
