"""Sessions: lanes, queues, approvals, commands, resets, maintenance."""

from beamclaw_core.sessions.bus import SessionBus, Subscription, TurnFailed, TurnHandle
from beamclaw_core.sessions.commands import COMMANDS, parse_command
from beamclaw_core.sessions.errors import SessionError, TurnNotStartedError, UnknownSessionError
from beamclaw_core.sessions.lane import SessionInfo, SessionLane
from beamclaw_core.sessions.runs import SessionAddress
from beamclaw_core.sessions.runtime import ProviderFactory, SystemPromptSource, reset_due

__all__ = [
    "COMMANDS",
    "ProviderFactory",
    "SessionAddress",
    "SessionBus",
    "SessionError",
    "SessionInfo",
    "SessionLane",
    "Subscription",
    "SystemPromptSource",
    "TurnFailed",
    "TurnHandle",
    "TurnNotStartedError",
    "UnknownSessionError",
    "parse_command",
    "reset_due",
]
