"""The whole configuration: every package's section under one root (DESIGN.md section 5)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field

from beamclaw_core import CoreSettings
from beamclaw_gateway.errors import GatewayConfigError
from beamclaw_gateway.settings import GatewaySettings
from beamclaw_mcp import MCPSettings
from beamclaw_memory import MemorySettings
from beamclaw_obs import BeamclawSettingsBase, LoadedConfig, ObsSettings, load_settings
from beamclaw_sandbox.settings import SandboxSettings
from beamclaw_scheduler.settings import SchedulerSettings
from beamclaw_tools.settings import ToolsSettings

PORT_ENV = "BEAMCLAW_PORT"


class BeamclawConfig(BeamclawSettingsBase):
    """Root of ``beamclaw.toml``: one field per package section."""

    obs: ObsSettings = Field(default_factory=ObsSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    mcp: MCPSettings = Field(default_factory=MCPSettings)
    core: CoreSettings = Field(default_factory=CoreSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)


def load_config(path: Path | None = None) -> LoadedConfig[BeamclawConfig]:
    """Load ``beamclaw.toml`` by the lookup order (or ``path``) plus env overrides."""
    return load_settings(BeamclawConfig, path)


def effective_port(config: BeamclawConfig) -> int:
    """``BEAMCLAW_PORT`` if set, else ``[gateway.http] port``."""
    raw = os.environ.get(PORT_ENV)
    if not raw:
        return config.gateway.http.port
    try:
        port = int(raw)
    except ValueError as exc:
        raise GatewayConfigError(f"{PORT_ENV}={raw!r} is not a port number") from exc
    if not 0 <= port <= 65535:
        raise GatewayConfigError(f"{PORT_ENV}={raw!r} is outside 0-65535")
    return port
