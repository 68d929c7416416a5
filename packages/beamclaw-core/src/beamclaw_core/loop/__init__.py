"""The agentic loop: a pure machine (states, events, effects, ``transition``) and its
async executor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.loop.context import (
        SPAWN_AGENTS_TOOL,
        SUBMIT_RESULT_TOOL,
        ApprovalRule,
        LoopContext,
        LoopLimits,
    )
    from beamclaw_core.loop.errors import EventDecodeError, IllegalTransition, LoopError
    from beamclaw_core.loop.machine import TABLE, table_rows, transition
    from beamclaw_core.loop.states import State, is_busy, state_from_json, state_to_json
    from beamclaw_core.loop.steps import Transition
    from beamclaw_core.loop.turn_events import (
        Accepted,
        ApprovalRequested,
        ApprovalResolved,
        Cancelled,
        Compacted,
        Dropped,
        LimitReached,
        Notice,
        Queued,
        Retrying,
        TextChunk,
        ToolFinished,
        ToolStarted,
        TurnDone,
        TurnError,
        TurnEvent,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.loop.context": (
                "SPAWN_AGENTS_TOOL",
                "SUBMIT_RESULT_TOOL",
                "ApprovalRule",
                "LoopContext",
                "LoopLimits",
            ),
            "beamclaw_core.loop.errors": ("EventDecodeError", "IllegalTransition", "LoopError"),
            "beamclaw_core.loop.machine": ("TABLE", "table_rows", "transition"),
            "beamclaw_core.loop.states": ("State", "is_busy", "state_from_json", "state_to_json"),
            "beamclaw_core.loop.steps": ("Transition",),
            "beamclaw_core.loop.turn_events": (
                "Accepted",
                "ApprovalRequested",
                "ApprovalResolved",
                "Cancelled",
                "Compacted",
                "Dropped",
                "LimitReached",
                "Notice",
                "Queued",
                "Retrying",
                "TextChunk",
                "ToolFinished",
                "ToolStarted",
                "TurnDone",
                "TurnError",
                "TurnEvent",
            ),
        },
    )

__all__ = [
    "SPAWN_AGENTS_TOOL",
    "SUBMIT_RESULT_TOOL",
    "TABLE",
    "Accepted",
    "ApprovalRequested",
    "ApprovalResolved",
    "ApprovalRule",
    "Cancelled",
    "Compacted",
    "Dropped",
    "EventDecodeError",
    "IllegalTransition",
    "LimitReached",
    "LoopContext",
    "LoopError",
    "LoopLimits",
    "Notice",
    "Queued",
    "Retrying",
    "State",
    "TextChunk",
    "ToolFinished",
    "ToolStarted",
    "Transition",
    "TurnDone",
    "TurnError",
    "TurnEvent",
    "is_busy",
    "state_from_json",
    "state_to_json",
    "table_rows",
    "transition",
]
