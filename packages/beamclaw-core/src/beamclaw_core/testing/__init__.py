"""Test doubles shipped with beamclaw-core: a scripted provider and fake LLM servers."""

from beamclaw_core.testing.scripted import (
    CallTool,
    CallTools,
    Fail,
    Hang,
    Reply,
    Rule,
    RuleFn,
    ScriptedCall,
    ScriptedProvider,
    ScriptStep,
)

__all__ = [
    "CallTool",
    "CallTools",
    "Fail",
    "Hang",
    "Reply",
    "Rule",
    "RuleFn",
    "ScriptStep",
    "ScriptedCall",
    "ScriptedProvider",
]
