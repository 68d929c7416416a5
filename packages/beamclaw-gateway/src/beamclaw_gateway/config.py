"""The whole configuration: every package's section under one root (DESIGN.md section 5).

Invariant: a key whose feature does not exist yet (:data:`NOT_AVAILABLE_YET`) loads only
with its default value; any other value, from the file or the environment, is a
:class:`~beamclaw_obs.ConfigError` telling the user to remove it, so the configuration
never claims something nothing does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from beamclaw_core import AgentSettings, CoreSettings, unknown_agent_providers
from beamclaw_gateway.cluster_settings import ClusterSettings
from beamclaw_gateway.settings import GatewaySettings, listen_port
from beamclaw_mcp import MCPSettings
from beamclaw_memory import MemorySettings
from beamclaw_obs import (
    BeamclawSettingsBase,
    ConfigError,
    LoadedConfig,
    ObsSettings,
    Secret,
    load_settings,
)
from beamclaw_sandbox.settings import SandboxSettings
from beamclaw_scheduler.settings import SchedulerSettings
from beamclaw_tools.settings import ToolsSettings

NOT_AVAILABLE_YET: tuple[tuple[str, str], ...] = (
    ("gateway.channels.tui", "turning the TUI channel off"),
)
"""Sections (dotted paths) read by nothing yet, and what a non-default value would ask
for. A later issue that builds the feature removes its row."""


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
    cluster: ClusterSettings = Field(default_factory=ClusterSettings)
    agents: dict[str, AgentSettings] = Field(
        default_factory=dict[str, AgentSettings],
        description=(
            "Per-agent provider, model and autonomy level (tool allow/deny: "
            "``[tools.agents.<id>]``); unset keys and agents not listed use ``[core]``."
        ),
    )


def load_config(path: Path | None = None) -> LoadedConfig[BeamclawConfig]:
    """Load ``beamclaw.toml`` by the lookup order (or ``path``) plus env overrides.

    Raises:
        ConfigError: the file is malformed or invalid, sets a key of
            :data:`NOT_AVAILABLE_YET` to anything but its default, or an
            ``[agents.<id>] provider`` names no ``[core.providers]`` section.
    """
    loaded = load_settings(BeamclawConfig, path)
    config = loaded.settings
    problems = not_available_yet(config) + unknown_agent_providers(config.core, config.agents)
    if problems:
        raise ConfigError(loaded.source, problems)
    return loaded


def _toml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Secret):
        return f"{{ {value.describe()} }}"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def not_available_yet(config: BeamclawConfig) -> list[str]:
    """One ``"key = value: … is not available yet; remove it"`` line per refused key."""
    problems: list[str] = []
    for path, feature in NOT_AVAILABLE_YET:
        section: Any = config
        for part in path.split("."):
            section = getattr(section, part)
        assert isinstance(section, BaseModel)
        default = type(section)()
        for name in type(section).model_fields:
            value = getattr(section, name)
            if value != getattr(default, name):
                problems.append(
                    f"{path}.{name} = {_toml_text(value)}: {feature} is not available yet "
                    "(a later release adds it); remove the key"
                )
    return problems


def effective_port(config: BeamclawConfig) -> int:
    """``BEAMCLAW_PORT`` if set, else ``[gateway.http] port`` (:func:`listen_port`)."""
    return listen_port(config.gateway.http)
