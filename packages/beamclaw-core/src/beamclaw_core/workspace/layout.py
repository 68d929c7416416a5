"""Where agent workspaces live: ``$BEAMCLAW_HOME/agents/<name>/``.

Every path handed out here comes from a validated agent name, so no caller can reach
outside the agents directory through a name such as ``../x``.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from beamclaw_core.workspace.names import validate_agent_name
from beamclaw_obs import beamclaw_home

AGENTS_DIRNAME = "agents"
MEMORY_DIRNAME = "memory"
"""Daily logs: ``memory/YYYY-MM-DD.md``."""
SKILLS_DIRNAME = "skills"
"""Per-agent skills: ``skills/<skill>/SKILL.md``."""
ARCHIVE_DIRNAME = "archive"
"""Bootstrap files replaced by a rehatch: ``archive/rehatch-<UTC time>/``."""


def agents_root(home: Path | None = None) -> Path:
    """``<home>/agents`` (``home`` defaults to ``$BEAMCLAW_HOME``); not created."""
    return (home if home is not None else beamclaw_home()) / AGENTS_DIRNAME


def agent_dir(name: str, home: Path | None = None) -> Path:
    """The workspace directory of agent ``name`` (validated); not created."""
    return agents_root(home) / validate_agent_name(name)


def daily_log_path(workspace: Path, day: date) -> Path:
    """``<workspace>/memory/YYYY-MM-DD.md`` for ``day``."""
    return workspace / MEMORY_DIRNAME / f"{day.isoformat()}.md"
