"""The MCP host: every configured server, supervised, with its tools in the registry.

:meth:`MCPManager.start` returns at once: each enabled server runs as the child of its own
:class:`beamclaw_obs.Supervisor` (one_for_one; restart intensity ``max_restarts`` within
``restart_window_seconds``; exponential backoff), so servers connect concurrently and one
server's failure never touches another. Status per server (starting / up / restarting /
failed / disabled / stopped, tool count, restarts, last error) is available at any time,
and :meth:`MCPManager.health` summarises it for ``/health``.

Wiring (composition root)::

    manager = MCPManager(config.mcp, sink=tool_registry)
    manager.start()                        # never blocks
    health.register("mcp", manager.health) # not critical: MCP never gates readiness
    ...
    await manager.stop()
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from beamclaw_mcp.catalog import MCPToolCatalog
from beamclaw_mcp.errors import MCPUnknownServerError
from beamclaw_mcp.grants import GrantPolicy
from beamclaw_mcp.settings import MCPSettings
from beamclaw_mcp.tool import MCPTool
from beamclaw_mcp.types import RemoteTool, ServerState, ServerStatus, ToolSink
from beamclaw_obs import (
    Backoff,
    ChildSpec,
    ComponentHealth,
    HealthState,
    Restart,
    Supervisor,
)
from beamclaw_tools import ToolDef, ToolOutput

if TYPE_CHECKING:
    from beamclaw_mcp.connection import ServerConnection

_SETTLE_POLL = 0.02


class MCPManager:
    """Owns the connections, their supervisors and the tool catalog.

    Args:
        settings: the ``[mcp]`` section.
        sink: the tool registry MCP tools are registered in (optional: without one the
            tools are still available through :meth:`tools` and :meth:`tool`).
    """

    def __init__(self, settings: MCPSettings, *, sink: ToolSink | None = None) -> None:
        self.settings = settings
        self.grants = GrantPolicy(settings)
        self._denied: dict[str, tuple[int, tuple[str, ...]]] = {}
        qualify = frozenset(
            s.name
            for s in settings.servers
            if (
                s.qualify_tool_names
                if s.qualify_tool_names is not None
                else settings.qualify_tool_names
            )
        )
        self._connections: dict[str, ServerConnection] = {}
        if settings.servers:  # the MCP SDK loads only when a server is configured
            from beamclaw_mcp.connection import ServerConnection

            self._connections = {
                s.name: ServerConnection(s, settings, self._on_tools) for s in settings.servers
            }
        self._catalog = MCPToolCatalog(self._make_tool, sink=sink, qualify_servers=qualify)
        self._supervisors: dict[str, Supervisor] = {}
        self._started = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start every enabled server in the background and return immediately."""
        if self._started:
            return
        self._started = True
        for name, conn in self._connections.items():
            if conn.settings.enabled:
                self._start_supervised(name, conn)

    def _start_supervised(self, name: str, conn: ServerConnection) -> None:
        s = self.settings
        supervisor = Supervisor(
            f"mcp/{name}",
            max_restarts=s.max_restarts,
            window_seconds=s.restart_window_seconds,
            backoff=Backoff(
                initial=s.backoff_initial_seconds,
                factor=s.backoff_factor,
                maximum=s.backoff_max_seconds,
            ),
        )
        self._supervisors[name] = supervisor
        supervisor.start_child(
            ChildSpec(
                id=name, start=conn.run, restart=Restart.TRANSIENT, on_give_up=conn.mark_failed
            )
        )

    async def stop(self) -> None:
        """Stop every server (closing sessions, terminating processes) and drop the tools."""
        supervisors = list(self._supervisors.items())
        self._supervisors.clear()
        await asyncio.gather(*(sup.stop() for _name, sup in supervisors))
        for name, _sup in supervisors:
            self._connections[name].mark_stopped()
        self._started = False

    async def restart_server(self, name: str) -> None:
        """Restart one server now (e.g. after it was marked failed)."""
        conn = self._connection(name)
        supervisor = self._supervisors.pop(name, None)
        if supervisor is not None:
            await supervisor.stop()
        self._start_supervised(name, conn)

    async def wait_settled(self, wait_seconds: float) -> bool:
        """Wait until no enabled server is still starting/restarting (True) or time is up."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        while not all(c.settled() for c in self._connections.values()):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(_SETTLE_POLL)
        return True

    async def wait_up(self, name: str, wait_seconds: float) -> bool:
        """Wait until server ``name`` has completed a handshake (True) or time is up."""
        return await self._connection(name).wait_up(wait_seconds)

    # ------------------------------------------------------------------ status

    def status(self) -> list[ServerStatus]:
        """One snapshot per configured server, in configuration order."""
        return [c.status() for c in self._connections.values()]

    def server_status(self, name: str) -> ServerStatus:
        return self._connection(name).status()

    def health(self) -> ComponentHealth:
        """``up`` when every enabled server is up; ``starting`` while any is connecting
        for the first time; ``degraded`` when any is restarting or failed. Never ``down``:
        MCP servers are optional and never stop the gateway from taking turns."""
        statuses = self.status()
        data: dict[str, Any] = {"servers": {st.name: st.as_dict() for st in statuses}}
        enabled = [st for st in statuses if st.state is not ServerState.DISABLED]
        if not enabled:
            return ComponentHealth(HealthState.UP, "no MCP servers enabled", data)
        bad = [
            st.name for st in enabled if st.state in (ServerState.FAILED, ServerState.RESTARTING)
        ]
        if bad:
            return ComponentHealth(HealthState.DEGRADED, f"not up: {', '.join(bad)}", data)
        if any(st.state is ServerState.STARTING for st in enabled):
            return ComponentHealth(HealthState.STARTING, "servers starting", data)
        up = sum(1 for st in enabled if st.state is ServerState.UP)
        return ComponentHealth(HealthState.UP, f"{up}/{len(enabled)} servers up", data)

    # ------------------------------------------------------------------ tools

    def tools(self, agent_id: str | None = None, server: str | None = None) -> list[MCPTool]:
        """Exposed MCP tools, optionally only those ``agent_id`` is granted / of ``server``."""
        out = self._catalog.tools()
        if server is not None:
            self._connection(server)
            out = [t for t in out if t.server == server]
        if agent_id is not None:
            out = [t for t in out if self.grants.allows(agent_id, t.server)]
        return out

    def definitions(self, agent_id: str | None = None) -> list[ToolDef]:
        """The definitions the model sees (granted to ``agent_id`` when given)."""
        return [t.definition for t in self.tools(agent_id)]

    def denied_tool_names(self, agent_id: str) -> list[str]:
        """Exposed names of MCP tools ``agent_id`` is *not* granted — for narrowing a
        name-based tool policy (``policy.narrowed(deny=...)``) when building a turn
        (asked on every turn: kept per agent until the exposed tools change)."""
        version = self._catalog.version
        cached = self._denied.get(agent_id)
        if cached is None or cached[0] != version:
            names = tuple(
                t.definition.name
                for t in self._catalog.tools()
                if not self.grants.allows(agent_id, t.server)
            )
            cached = self._denied[agent_id] = (version, names)
        return list(cached[1])

    def tool(self, exposed_name: str) -> MCPTool | None:
        """The exposed tool called ``exposed_name``."""
        return self._catalog.by_name(exposed_name)

    @property
    def skipped_tools(self) -> dict[tuple[str, str], str]:
        """Tools the registry refused under both names: ``(server, tool) → reason``."""
        return dict(self._catalog.skipped)

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout_seconds: float | None = None,
    ) -> ToolOutput:
        """Call ``tool`` (its remote name) on ``server``; raises typed errors (no grants:
        this is the operator's path, used by the CLI)."""
        return await self._connection(server).call_tool(
            tool, arguments, timeout_seconds=timeout_seconds
        )

    def remote_tools(self, server: str) -> list[RemoteTool]:
        """The tools ``server`` listed, as it named them."""
        return list(self._connection(server).tools.values())

    # ------------------------------------------------------------------ internals

    def _connection(self, name: str) -> ServerConnection:
        conn = self._connections.get(name)
        if conn is None:
            raise MCPUnknownServerError(name)
        return conn

    def _on_tools(self, server: str, tools: list[RemoteTool] | None) -> None:
        self._catalog.update(server, tools)

    def _make_tool(self, remote: RemoteTool, exposed_name: str) -> MCPTool:
        return MCPTool(remote, exposed_name, self._connections[remote.server], self.grants)
