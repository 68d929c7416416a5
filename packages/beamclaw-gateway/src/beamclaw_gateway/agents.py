"""Which agents the gateway serves: the default agent plus ``$BEAMCLAW_HOME/agents/*``."""

from __future__ import annotations

from pathlib import Path

from beamclaw_core.workspace import agent_exists, is_valid_agent_name, list_agents

MODEL_PREFIX = "beamclaw/"


class AgentCatalog:
    """Resolves OpenAI ``model`` names and webhook/A2A agent names to agent ids."""

    def __init__(self, default_agent: str, home: Path) -> None:
        self.default_agent = default_agent
        self.home = home

    def ids(self) -> list[str]:
        """Every agent id, the default first, then the others sorted."""
        others = [a.name for a in list_agents(home=self.home) if a.name != self.default_agent]
        return [self.default_agent, *others]

    def resolve(self, name: str | None) -> str | None:
        """The agent id named by ``name`` (``beamclaw/<agent>`` or ``<agent>``), else None.

        None and ``""`` mean the default agent.
        """
        if not name:
            return self.default_agent
        agent = name.removeprefix(MODEL_PREFIX)
        if agent == self.default_agent:
            return agent
        if not is_valid_agent_name(agent):
            return None
        return agent if agent_exists(agent, home=self.home) else None
