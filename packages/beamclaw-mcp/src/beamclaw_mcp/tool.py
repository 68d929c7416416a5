"""An MCP server's tool as a :class:`beamclaw_tools.Tool`.

The definition the model sees: the exposed (collision-free) name, the server's description,
the sanitised input schema, ``source = "mcp:<server>"``, the call timeout, and an autonomy
floor (``read_only`` when the server marks the tool ``readOnlyHint``, else ``supervised``).
Executing checks the agent's grant, then calls the server; every failure becomes a
``ToolOutput.error`` with a one-line reason (the loop turns it into a tool error result).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beamclaw_mcp.errors import BeamclawMCPError
from beamclaw_mcp.grants import SOURCE_PREFIX, GrantPolicy
from beamclaw_mcp.schema import sanitize_schema
from beamclaw_mcp.types import RemoteTool
from beamclaw_obs import scrub
from beamclaw_tools import Autonomy, SessionRef, ToolDef, ToolOutput

if TYPE_CHECKING:
    from beamclaw_mcp.connection import ServerConnection

MAX_DESCRIPTION = 1024
_MARKER_ROOM = 200


def tool_definition(remote: RemoteTool, exposed_name: str, connection: ServerConnection) -> ToolDef:
    """The provider-facing definition of ``remote`` under ``exposed_name``."""
    description = scrub(remote.description.strip())[:MAX_DESCRIPTION] or remote.name
    return ToolDef(
        name=exposed_name,
        description=description,
        parameters=sanitize_schema(remote.input_schema),
        source=f"{SOURCE_PREFIX}{remote.server}",
        requires_approval=connection.settings.requires_approval,
        min_autonomy=Autonomy.READ_ONLY if remote.read_only else Autonomy.SUPERVISED,
        timeout_seconds=connection.call_timeout,
        # our own cap (plus its marker) already applied; keep the registry from re-cutting
        max_output_chars=connection.max_result_chars + _MARKER_ROOM,
    )


class MCPTool:
    """A :class:`beamclaw_tools.Tool` that forwards to one MCP server's tool."""

    def __init__(
        self,
        remote: RemoteTool,
        exposed_name: str,
        connection: ServerConnection,
        grants: GrantPolicy,
    ) -> None:
        self.remote = remote
        self._connection = connection
        self._grants = grants
        self._definition = tool_definition(remote, exposed_name, connection)

    @property
    def definition(self) -> ToolDef:
        return self._definition

    @property
    def server(self) -> str:
        return self.remote.server

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        """Call the server's tool; grants are checked first. Never raises for MCP failures."""
        if not self._grants.allows(session.agent_id, self.remote.server):
            return ToolOutput.error(
                f"agent {session.agent_id!r} is not granted MCP server {self.remote.server!r}"
            )
        try:
            return await self._connection.call_tool(self.remote.name, args)
        except BeamclawMCPError as exc:
            return ToolOutput.error(str(exc))
