"""Where agent workspaces live: ``$BEAMCLAW_HOME/agents/<name>/``.

The path comes from :func:`beamclaw_tools.agent_workspace`, the rule the file tools and
the ``workspace_memory`` tool use, so core and tools always agree on where an agent
lives, and no name such as ``../x`` can reach outside the agents directory. (New agents
must also satisfy the stricter :func:`~beamclaw_core.workspace.validate_agent_name`.)
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from beamclaw_core.workspace.errors import InvalidAgentNameError
from beamclaw_obs import beamclaw_home
from beamclaw_tools import InvalidAgentIdError, agent_workspace, validate_agent_id

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


def is_addressable(name: str) -> bool:
    """True when ``name`` can safely name an existing agent directory."""
    try:
        validate_agent_id(name)
    except InvalidAgentIdError:
        return False
    return True


def agent_dir(name: str, home: Path | None = None) -> Path:
    """The workspace directory of agent ``name``; not created.

    Raises:
        InvalidAgentNameError: ``name`` cannot safely name a directory.
    """
    try:
        return agent_workspace(name, home if home is not None else beamclaw_home())
    except InvalidAgentIdError as exc:
        raise InvalidAgentNameError(
            name, "not a safe directory name (letters, digits, '.', '-', '_')"
        ) from exc


def daily_log_path(workspace: Path, day: date) -> Path:
    """``<workspace>/memory/YYYY-MM-DD.md`` for ``day``."""
    return workspace / MEMORY_DIRNAME / f"{day.isoformat()}.md"
