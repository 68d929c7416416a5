"""The ``[tools]`` configuration section."""

from __future__ import annotations

from beamclaw_obs import Section
from pydantic import Field


class ToolsSettings(Section):
    """``[tools]``: built-in tool policy shared by every agent."""

    enabled: list[str] = Field(default_factory=lambda: ["*"])
    """Tool names offered to agents (``*`` = all built-ins)."""
    disabled: list[str] = Field(default_factory=lambda: [])
    """Tool names never offered, even when ``enabled`` matches."""
