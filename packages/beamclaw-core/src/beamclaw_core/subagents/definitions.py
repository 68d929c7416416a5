"""The two sub-agent tools (REQ-BED-008/009). The loop machine answers them itself."""

from __future__ import annotations

from beamclaw_core.loop.context import SPAWN_AGENTS_TOOL, SUBMIT_RESULT_TOOL
from beamclaw_tools import ToolDef

SPAWN_AGENTS = ToolDef(
    name=SPAWN_AGENTS_TOOL,
    description=(
        "Start sub-agents that work on independent tasks in parallel and wait for all of "
        "their results. Each task must be self-contained: the sub-agent sees only its task."
    ),
    parameters={
        "type": "object",
        "required": ["tasks"],
        "properties": {
            "tasks": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["task"],
                    "properties": {
                        "task": {"type": "string", "description": "What the sub-agent must do"},
                        "agent": {"type": "string", "description": "Agent to use (optional)"},
                    },
                },
            }
        },
    },
    source="builtin",
)

SUBMIT_RESULT = ToolDef(
    name=SUBMIT_RESULT_TOOL,
    description="Submit your final result to the conversation that started you, and stop.",
    parameters={
        "type": "object",
        "required": ["result"],
        "properties": {
            "result": {"type": "string", "description": "Final result for the parent"},
            "success": {"type": "boolean", "description": "Whether the task succeeded"},
        },
    },
    source="builtin",
)


def subagent_tools(is_sub_agent: bool) -> tuple[ToolDef, ...]:
    """Children get ``submit_result`` only (no nested spawning); parents ``spawn_agents``."""
    return (SUBMIT_RESULT,) if is_sub_agent else (SPAWN_AGENTS,)
