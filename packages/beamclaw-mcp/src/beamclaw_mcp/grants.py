"""Per-agent grants: which MCP servers an agent may use.

An agent may use a server when (1) the server's ``agents`` list is empty or names the
agent, and (2) ``[mcp.grants]`` has no entry for the agent, or its entry names the server
or ``"*"``. The policy is enforced twice: tool listings for an agent hide ungranted tools
(:meth:`GrantPolicy.allows_tool`), and an ungranted call is refused at execution.
"""

from __future__ import annotations

from beamclaw_mcp.settings import MCPSettings
from beamclaw_tools import ToolDef

WILDCARD = "*"
SOURCE_PREFIX = "mcp:"


class GrantPolicy:
    """Answers "may agent A use server S?" from the ``[mcp]`` section."""

    def __init__(self, settings: MCPSettings) -> None:
        self._server_agents = {s.name: frozenset(s.agents) for s in settings.servers if s.agents}
        self._grants = {agent: frozenset(servers) for agent, servers in settings.grants.items()}
        self._servers = tuple(s.name for s in settings.servers)

    def allows(self, agent_id: str, server: str) -> bool:
        """True when ``agent_id`` may call tools of ``server``."""
        restricted = self._server_agents.get(server)
        if restricted is not None and agent_id not in restricted:
            return False
        granted = self._grants.get(agent_id)
        return granted is None or WILDCARD in granted or server in granted

    def servers_for(self, agent_id: str) -> tuple[str, ...]:
        """The configured servers ``agent_id`` may use, in configuration order."""
        return tuple(s for s in self._servers if self.allows(agent_id, s))

    def allows_tool(self, agent_id: str, definition: ToolDef) -> bool:
        """Filter for tool listings: non-MCP tools pass; MCP tools need their server granted."""
        if not definition.source.startswith(SOURCE_PREFIX):
            return True
        return self.allows(agent_id, definition.source[len(SOURCE_PREFIX) :])
