"""The set of MCP tools currently offered, kept in step with a tool registry.

Servers report their tool lists (on every handshake and ``list_changed`` refresh) and
``None`` when they are gone for good (failed, stopped). The catalog recomputes every
exposed name with :func:`~beamclaw_mcp.naming.assign_names` and applies the difference to
the :class:`~beamclaw_mcp.types.ToolSink`: tools that vanished or changed (name, schema,
description) are unregistered, new ones registered. A registration the sink refuses
(a built-in with the same name) is retried under ``<server>__<tool>``; if that is refused
too the tool is skipped and the reason kept in :attr:`MCPToolCatalog.skipped`.

A server that is restarting keeps its tools registered: calls fail fast with "server is
restarting" instead of the model seeing tools appear and disappear.
"""

from __future__ import annotations

from collections.abc import Callable

from loguru import logger

from beamclaw_mcp.naming import assign_names, qualified_tool_name
from beamclaw_mcp.tool import MCPTool
from beamclaw_mcp.types import RemoteTool, ToolSink

ToolFactory = Callable[[RemoteTool, str], MCPTool]
"""Builds the Tool for a remote tool under an exposed name."""


class MCPToolCatalog:
    """Exposed MCP tools by name, mirrored into an optional sink (a tool registry)."""

    def __init__(
        self,
        factory: ToolFactory,
        *,
        sink: ToolSink | None = None,
        qualify_servers: frozenset[str] = frozenset(),
    ) -> None:
        self._factory = factory
        self._sink = sink
        self._qualify = qualify_servers
        self._remote: dict[str, dict[str, RemoteTool]] = {}
        self._registered: dict[tuple[str, str], MCPTool] = {}
        self.skipped: dict[tuple[str, str], str] = {}
        self.version = 0
        """Bumped whenever the exposed tools may have changed (caches key on it)."""
        self._sorted: tuple[MCPTool, ...] | None = None

    def update(self, server: str, tools: list[RemoteTool] | None) -> None:
        """Record ``server``'s current tools (``None``: the server is gone) and sync."""
        if tools is None:
            self._remote.pop(server, None)
        else:
            self._remote[server] = {t.name: t for t in tools}
        self._sync()

    def tools(self) -> list[MCPTool]:
        """Every exposed tool, sorted by exposed name."""
        if self._sorted is None:
            self._sorted = tuple(sorted(self._registered.values(), key=lambda t: t.definition.name))
        return list(self._sorted)

    def by_name(self, name: str) -> MCPTool | None:
        """The exposed tool called ``name``."""
        return next((t for t in self._registered.values() if t.definition.name == name), None)

    def for_server(self, server: str) -> list[MCPTool]:
        return [t for (s, _n), t in sorted(self._registered.items()) if s == server]

    def _sync(self) -> None:
        self.version += 1
        self._sorted = None
        pairs = [(s, n) for s, tools in self._remote.items() for n in tools]
        names = assign_names(pairs, self._qualify)
        wanted: dict[tuple[str, str], MCPTool] = {}
        for key, exposed in names.items():
            current = self._registered.get(key)
            remote = self._remote[key[0]][key[1]]
            if (
                current is not None
                and current.remote == remote
                and (current.definition.name == exposed or key in self._renamed)
            ):
                wanted[key] = current
            else:
                wanted[key] = self._factory(remote, exposed)
        for key, tool in list(self._registered.items()):
            if wanted.get(key) is not tool:
                self._unregister(tool)
                del self._registered[key]
        self.skipped = {k: v for k, v in self.skipped.items() if k in wanted}
        for key, tool in sorted(wanted.items()):
            if key in self._registered:
                continue
            registered = self._register(key, tool)
            if registered is not None:
                self._registered[key] = registered

    @property
    def _renamed(self) -> set[tuple[str, str]]:
        """Tools registered under their qualified name because the sink refused the plain one."""
        return {
            key
            for key, tool in self._registered.items()
            if tool.definition.name == qualified_tool_name(*key)
        }

    def _register(self, key: tuple[str, str], tool: MCPTool) -> MCPTool | None:
        if self._sink is None:
            return tool
        try:
            self._sink.register(tool)
            return tool
        except Exception as first:  # any refusal: try the qualified name
            qualified = qualified_tool_name(*key)
            if tool.definition.name == qualified:
                self._skip(key, first)
                return None
            retry = self._factory(tool.remote, qualified)
            try:
                self._sink.register(retry)
            except Exception as second:  # refused twice: skip, keep the reason
                self._skip(key, second)
                return None
            return retry

    def _skip(self, key: tuple[str, str], error: BaseException) -> None:
        self.skipped[key] = str(error)
        logger.warning("MCP tool {}/{} not registered: {}", key[0], key[1], error)

    def _unregister(self, tool: MCPTool) -> None:
        if self._sink is None:
            return
        try:
            self._sink.unregister(tool.definition.name)
        except Exception as exc:  # an already-missing tool is fine
            logger.debug("unregister {} failed: {}", tool.definition.name, exc)
