"""The ``[mcp]`` configuration section.

Invariants (checked at load time, so a bad entry is a clear :class:`~beamclaw_obs.ConfigError`
naming the key rather than a crash later):

* every server has a unique ``name`` made of letters, digits, ``_`` and ``-``;
* the transport is ``stdio`` (needs ``command``), ``streamable_http`` or ``sse`` (need
  ``url``); when ``transport`` is omitted it is inferred: ``command`` → stdio, ``url`` →
  streamable HTTP;
* timeouts and limits are positive.

Grants: an agent may use a server when the server's ``agents`` list is empty or names the
agent, **and** ``[mcp.grants]`` has no entry for the agent or its entry names the server
(``"*"`` means every server).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from beamclaw_obs import Secret, Section

Transport = Literal["stdio", "streamable_http", "sse"]

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,48}$")


class MCPServerSettings(Section):
    """One ``[[mcp.servers]]`` entry: a stdio command or an HTTP ``url``."""

    name: str
    """Unique server name; used in ``mcp:<name>`` tool sources and qualified tool names."""
    enabled: bool = True
    """A disabled server is listed (status ``disabled``) but never started."""
    transport: Transport | None = None
    """``stdio`` | ``streamable_http`` | ``sse``; inferred from ``command``/``url`` when unset."""
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, Secret | str] = Field(default_factory=dict)
    """Extra environment for a stdio server (merged over a minimal safe environment)."""
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, Secret | str] = Field(default_factory=dict)
    """HTTP headers for ``streamable_http``/``sse`` (e.g. ``Authorization``), secrets allowed."""
    initialize_timeout_seconds: float | None = Field(default=None, gt=0)
    """Overrides ``[mcp] initialize_timeout_seconds`` for this server."""
    call_timeout_seconds: float | None = Field(default=None, gt=0)
    """Overrides ``[mcp] call_timeout_seconds`` for this server."""
    max_result_chars: int | None = Field(default=None, gt=0)
    """Overrides ``[mcp] max_result_chars`` for this server."""
    agents: list[str] = Field(default_factory=list)
    """Agents allowed to use this server; empty means every agent (subject to grants)."""
    qualify_tool_names: bool | None = None
    """Always expose this server's tools as ``<server>__<tool>`` (default: only on collision)."""
    requires_approval: bool = False
    """Mark this server's tools as needing approval in supervised mode."""

    @model_validator(mode="after")
    def _check(self) -> MCPServerSettings:
        if not _NAME_RE.match(self.name):
            raise ValueError(f"server name {self.name!r} must be 1-48 letters, digits, '_' or '-'")
        transport = self.resolved_transport
        if transport == "stdio" and not self.command:
            raise ValueError(f"server {self.name!r}: stdio transport needs 'command'")
        if transport in ("streamable_http", "sse") and not self.url:
            raise ValueError(f"server {self.name!r}: {transport} transport needs 'url'")
        return self

    @property
    def resolved_transport(self) -> Transport:
        """The transport in use: explicit, else inferred from ``command``/``url``."""
        if self.transport is not None:
            return self.transport
        if self.command:
            return "stdio"
        if self.url:
            return "streamable_http"
        raise ValueError(f"server {self.name!r} needs 'command' (stdio) or 'url' (HTTP)")


class MCPSettings(Section):
    """``[mcp]``: the MCP servers BeamClaw connects to, and how it supervises them."""

    servers: list[MCPServerSettings] = Field(default_factory=list)
    initialize_timeout_seconds: float = Field(default=30.0, gt=0)
    """Bound on connect + ``initialize`` + ``tools/list`` (and on pings)."""
    call_timeout_seconds: float = Field(default=60.0, gt=0)
    """Bound on one ``tools/call``; on expiry the call is cancelled on the server."""
    ping_interval_seconds: float = Field(default=30.0, gt=0)
    """How often an idle connection is pinged to detect a dead HTTP server."""
    max_restarts: int = Field(default=5, ge=0)
    """Restart intensity: more than this many restarts within the window → ``failed``."""
    restart_window_seconds: float = Field(default=30.0, gt=0)
    backoff_initial_seconds: float = Field(default=0.5, gt=0)
    backoff_factor: float = Field(default=2.0, ge=1.0)
    backoff_max_seconds: float = Field(default=30.0, gt=0)
    max_result_chars: int = Field(default=100_000, gt=0)
    """Text of one tool result beyond this is cut, with a truncation marker."""
    max_image_bytes: int = Field(default=5_000_000, gt=0)
    """Base64 size above which an image part is dropped (with a note in the text)."""
    qualify_tool_names: bool = False
    """Always expose tools as ``<server>__<tool>`` (default: only when names collide)."""
    grants: dict[str, list[str]] = Field(default_factory=dict)
    """``agent → [server, …]`` (``"*"`` = all); an agent without an entry may use every server."""

    @model_validator(mode="after")
    def _unique_names(self) -> MCPSettings:
        seen: set[str] = set()
        for server in self.servers:
            if server.name in seen:
                raise ValueError(f"duplicate MCP server name {server.name!r}")
            seen.add(server.name)
        return self

    def server(self, name: str) -> MCPServerSettings | None:
        """The entry called ``name``, if any."""
        return next((s for s in self.servers if s.name == name), None)
