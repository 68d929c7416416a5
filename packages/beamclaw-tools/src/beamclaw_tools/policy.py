"""Per-agent tool allow/deny lists (glob patterns over tool names).

A name is permitted when it matches some ``allow`` pattern, matches no ``deny`` pattern,
and the parent policy (if any) permits it too: narrowing can only remove tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from beamclaw_tools.settings import ToolsSettings


@dataclass(frozen=True)
class ToolPolicy:
    """Which tool names an agent may see and call."""

    allow: tuple[str, ...] = ("*",)
    deny: tuple[str, ...] = ()
    parent: ToolPolicy | None = None

    def permits(self, name: str) -> bool:
        if self.parent is not None and not self.parent.permits(name):
            return False
        if not any(fnmatchcase(name, p) for p in self.allow):
            return False
        return not any(fnmatchcase(name, p) for p in self.deny)

    def narrowed(self, allow: Iterable[str] = ("*",), deny: Iterable[str] = ()) -> ToolPolicy:
        """A policy that permits only what both this one and ``allow``/``deny`` permit."""
        return ToolPolicy(tuple(allow), tuple(deny), parent=self)

    @classmethod
    def for_agent(cls, settings: ToolsSettings, agent_id: str) -> ToolPolicy:
        """``[tools] enabled/disabled`` narrowed by ``[tools.agents.<agent_id>]``."""
        base = cls(tuple(settings.enabled), tuple(settings.disabled))
        agent = settings.agents.get(agent_id)
        if agent is None:
            return base
        return base.narrowed(agent.allow, agent.deny)


ALLOW_ALL = ToolPolicy()
