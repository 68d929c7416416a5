"""Sessions: lanes, queues, approvals, commands, resets, maintenance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.sessions.bus import SessionBus, Subscription, TurnFailed, TurnHandle
    from beamclaw_core.sessions.commands import COMMANDS, parse_command
    from beamclaw_core.sessions.ends import SessionEnd, SessionEndHook
    from beamclaw_core.sessions.errors import (
        FutureSequenceError,
        ReplayGapError,
        SessionError,
        TurnNotStartedError,
        UnknownSessionError,
    )
    from beamclaw_core.sessions.fold import TurnFold, TurnResult, TurnStatus, result_of
    from beamclaw_core.sessions.lane import SessionInfo, SessionLane
    from beamclaw_core.sessions.runs import SessionAddress
    from beamclaw_core.sessions.runtime import ProviderLookup, SystemPromptSource, reset_due
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.sessions.bus": (
                "SessionBus",
                "SessionEnd",
                "SessionEndHook",
                "Subscription",
                "TurnFailed",
                "TurnHandle",
            ),
            "beamclaw_core.sessions.commands": ("COMMANDS", "parse_command"),
            "beamclaw_core.sessions.ends": ("SessionEnd", "SessionEndHook"),
            "beamclaw_core.sessions.errors": (
                "FutureSequenceError",
                "ReplayGapError",
                "SessionError",
                "TurnNotStartedError",
                "UnknownSessionError",
            ),
            "beamclaw_core.sessions.fold": ("TurnFold", "TurnResult", "TurnStatus", "result_of"),
            "beamclaw_core.sessions.lane": ("SessionInfo", "SessionLane"),
            "beamclaw_core.sessions.runs": ("SessionAddress",),
            "beamclaw_core.sessions.runtime": (
                "ProviderLookup",
                "SystemPromptSource",
                "reset_due",
            ),
        },
    )

__all__ = [
    "COMMANDS",
    "FutureSequenceError",
    "ProviderLookup",
    "ReplayGapError",
    "SessionAddress",
    "SessionBus",
    "SessionEnd",
    "SessionEndHook",
    "SessionError",
    "SessionInfo",
    "SessionLane",
    "Subscription",
    "SystemPromptSource",
    "TurnFailed",
    "TurnFold",
    "TurnHandle",
    "TurnNotStartedError",
    "TurnResult",
    "TurnStatus",
    "UnknownSessionError",
    "parse_command",
    "reset_due",
    "result_of",
]
