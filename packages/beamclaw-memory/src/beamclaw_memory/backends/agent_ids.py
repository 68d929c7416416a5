"""The one rule for agent ids the memory service accepts (they name directories)."""

from __future__ import annotations

import re

from beamclaw_memory.errors import InvalidMemoryInputError

_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_agent(agent_id: str) -> None:
    """Raises :class:`InvalidMemoryInputError` unless ``agent_id`` is a valid agent id."""
    if not _AGENT_ID.match(agent_id) or ".." in agent_id:
        raise InvalidMemoryInputError("agent_id", f"{agent_id!r} is not a valid agent id")
