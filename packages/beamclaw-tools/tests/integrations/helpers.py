"""Running integration tools the way the loop does: through a :class:`ToolRegistry`."""

from __future__ import annotations

from typing import Any

from beamclaw_tools import SessionRef, ToolCall, ToolRegistry, ToolResult
from beamclaw_tools.integrations import Integrations


async def call(hub: Integrations, session: SessionRef, name: str, **args: Any) -> ToolResult:
    """Run tool ``name`` with ``args`` through a registry holding the hub's tools."""
    registry = ToolRegistry()
    registry.register_many(hub.tools())
    return await registry.execute(ToolCall(id="c1", name=name, args=args), session)
