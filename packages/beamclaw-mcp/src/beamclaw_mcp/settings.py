"""The ``[mcp]`` configuration section."""

from __future__ import annotations

from beamclaw_obs import Secret, Section
from pydantic import Field


class MCPServerSettings(Section):
    """One ``[[mcp.servers]]`` entry: a stdio command or an HTTP ``url``."""

    name: str
    command: str | None = None
    args: list[str] = Field(default_factory=lambda: [])
    env: dict[str, Secret | str] = Field(default_factory=lambda: {})
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, Secret | str] = Field(default_factory=lambda: {})


class MCPSettings(Section):
    """``[mcp]``: the MCP servers BeamClaw connects to."""

    servers: list[MCPServerSettings] = Field(default_factory=lambda: [])
