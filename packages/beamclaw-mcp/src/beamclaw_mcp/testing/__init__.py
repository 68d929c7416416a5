"""Test doubles for code that uses the MCP host.

* :mod:`beamclaw_mcp.testing.scripted_server` — a real stdio MCP server (SDK low-level
  ``Server``) with tools that return images, huge text, errors, structured content, sleep,
  change the tool list, or crash; modes that never answer or write invalid JSON-RPC.
* :func:`scripted_server_entry` — a ``[[mcp.servers]]`` entry that runs it.
* :class:`~beamclaw_mcp.types.RecordingToolSink` — an in-memory tool registry.
"""

from __future__ import annotations

import sys
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


__all__ = ["RecordingToolSink", "scripted_server_entry"]
