"""Errors of the sessions layer."""

from __future__ import annotations

from beamclaw_core.errors import BeamclawCoreError


class SessionError(BeamclawCoreError):
    """Base of session errors."""


class UnknownSessionError(SessionError):
    """No session with this id exists."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"unknown session {session_id!r}")


class TurnNotStartedError(SessionError):
    """A message handed to a session's worker never became a turn (nothing was stored)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id!r}: the message was not taken; send it again")
