"""Value types of the MCP host: server states, status snapshots and the registry port.

``ToolSink`` is the only thing this package needs from a tool registry (register a
:class:`~beamclaw_tools.Tool`, unregister a name). ``beamclaw_tools.ToolRegistry`` satisfies
it; :class:`RecordingToolSink` is a small in-memory one for tests and the CLI.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from beamclaw_tools import Tool, ToolDef


class ServerState(enum.StrEnum):
    """Lifecycle of one configured server."""

    STARTING = "starting"
    """First connection attempt in progress."""
    UP = "up"
    """Handshake done, tools listed, calls accepted."""
    RESTARTING = "restarting"
    """Connection lost or failed; reconnecting after a backoff."""
    FAILED = "failed"
    """Gave up (restart intensity exceeded, or a failure retrying cannot fix)."""
    DISABLED = "disabled"
    """``enabled = false`` in the configuration; never started."""
    STOPPED = "stopped"
    """Stopped by the host (shutdown)."""


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it (name, description, raw input schema)."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    read_only: bool | None = None
    """The server's ``readOnlyHint`` annotation, when given."""


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot of one server, as ``/health`` and ``beamclaw mcp list`` show it."""

    name: str
    transport: str
    state: ServerState
    tool_count: int = 0
    restarts: int = 0
    last_error: str | None = None
    server_name: str | None = None
    """The implementation name/version the server reported in ``initialize``."""
    server_version: str | None = None
    protocol_version: str | None = None
    since: float = 0.0
    """Wall-clock time (epoch seconds) of the last state change."""
    tools: tuple[str, ...] = field(default=())
    """Names of the tools the server offers (remote names)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (used by ``/health`` and ``--json``)."""
        return {
            "name": self.name,
            "transport": self.transport,
            "state": self.state.value,
            "tool_count": self.tool_count,
            "restarts": self.restarts,
            "last_error": self.last_error,
            "server_name": self.server_name,
            "server_version": self.server_version,
            "protocol_version": self.protocol_version,
            "since": self.since,
            "tools": list(self.tools),
        }


@runtime_checkable
class ToolSink(Protocol):
    """Where MCP tools are published (a tool registry).

    ``register`` may raise (e.g. a name collision with a built-in tool); the host then
    retries under the server-qualified name.
    """

    def register(self, tool: Tool) -> Any: ...

    def unregister(self, name: str) -> Any: ...


class RecordingToolSink:
    """An in-memory :class:`ToolSink`: a dict of name → tool. Refuses duplicate names."""

    def __init__(self, reserved: set[str] | None = None) -> None:
        self.tools: dict[str, Tool] = {}
        self._reserved = set(reserved or ())

    def register(self, tool: Tool) -> None:
        name = tool.definition.name
        if name in self.tools or name in self._reserved:
            raise ValueError(f"tool name {name!r} is already registered")
        self.tools[name] = tool

    def unregister(self, name: str) -> None:
        self.tools.pop(name, None)

    def definitions(self) -> list[ToolDef]:
        """The registered tools' definitions, sorted by name."""
        return [self.tools[n].definition for n in sorted(self.tools)]
