"""beamclaw-mcp: the MCP host (client connections, supervision, tools in the registry).

Servers are reached through the official ``mcp`` SDK over stdio, streamable HTTP or
legacy SSE; each runs supervised; their tools enter the tool registry under
collision-free names with provider-safe schemas, gated by per-agent grants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_mcp._version import __version__
from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_mcp.catalog import MCPToolCatalog
    from beamclaw_mcp.connection import ServerConnection
    from beamclaw_mcp.content import to_tool_output, truncate_text
    from beamclaw_mcp.errors import (
        BeamclawMCPError,
        MCPCallTimeoutError,
        MCPConnectError,
        MCPConnectionLostError,
        MCPHandshakeError,
        MCPProtocolError,
        MCPServerUnavailableError,
        MCPUnknownServerError,
        MCPUnknownToolError,
    )
    from beamclaw_mcp.grants import GrantPolicy
    from beamclaw_mcp.manager import MCPManager
    from beamclaw_mcp.naming import assign_names, qualified_tool_name, safe_tool_name
    from beamclaw_mcp.schema import sanitize_schema
    from beamclaw_mcp.settings import MCPServerSettings, MCPSettings
    from beamclaw_mcp.tool import MCPTool
    from beamclaw_mcp.types import (
        RecordingToolSink,
        RemoteTool,
        ServerState,
        ServerStatus,
        ToolSink,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_mcp.catalog": ("MCPToolCatalog",),
            "beamclaw_mcp.connection": ("ServerConnection",),
            "beamclaw_mcp.content": ("to_tool_output", "truncate_text"),
            "beamclaw_mcp.errors": (
                "BeamclawMCPError",
                "MCPCallTimeoutError",
                "MCPConnectError",
                "MCPConnectionLostError",
                "MCPHandshakeError",
                "MCPProtocolError",
                "MCPServerUnavailableError",
                "MCPUnknownServerError",
                "MCPUnknownToolError",
            ),
            "beamclaw_mcp.grants": ("GrantPolicy",),
            "beamclaw_mcp.manager": ("MCPManager",),
            "beamclaw_mcp.naming": ("assign_names", "qualified_tool_name", "safe_tool_name"),
            "beamclaw_mcp.schema": ("sanitize_schema",),
            "beamclaw_mcp.settings": ("MCPServerSettings", "MCPSettings"),
            "beamclaw_mcp.tool": ("MCPTool",),
            "beamclaw_mcp.types": (
                "RecordingToolSink",
                "RemoteTool",
                "ServerState",
                "ServerStatus",
                "ToolSink",
            ),
        },
    )

__all__ = [
    "BeamclawMCPError",
    "GrantPolicy",
    "MCPCallTimeoutError",
    "MCPConnectError",
    "MCPConnectionLostError",
    "MCPHandshakeError",
    "MCPManager",
    "MCPProtocolError",
    "MCPServerSettings",
    "MCPServerUnavailableError",
    "MCPSettings",
    "MCPTool",
    "MCPToolCatalog",
    "MCPUnknownServerError",
    "MCPUnknownToolError",
    "RecordingToolSink",
    "RemoteTool",
    "ServerConnection",
    "ServerState",
    "ServerStatus",
    "ToolSink",
    "__version__",
    "assign_names",
    "qualified_tool_name",
    "safe_tool_name",
    "sanitize_schema",
    "to_tool_output",
    "truncate_text",
]
