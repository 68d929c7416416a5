"""Sub-agents: the ``spawn_agents``/``submit_result`` tools and the child runner."""

from beamclaw_core.subagents.definitions import SPAWN_AGENTS, SUBMIT_RESULT, subagent_tools
from beamclaw_core.subagents.runner import SubAgentRunner

__all__ = ["SPAWN_AGENTS", "SUBMIT_RESULT", "SubAgentRunner", "subagent_tools"]
