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


class ReplayGapError(SessionError):
    """Events after the requested number are no longer kept: reload the history."""

    def __init__(self, session_id: str, after_seq: int, floor: int) -> None:
        self.session_id = session_id
        self.after_seq = after_seq
        self.floor = floor
        super().__init__(
            f"events of session {session_id} after {after_seq} are no longer kept "
            f"(the oldest replayable follows {floor}); reload the history and subscribe "
            "from its event_seq"
        )


class FutureSequenceError(SessionError):
    """The requested number was never given out in this session."""

    def __init__(self, session_id: str, after_seq: int, last_seq: int) -> None:
        self.session_id = session_id
        self.after_seq = after_seq
        self.last_seq = last_seq
        super().__init__(
            f"session {session_id} has published nothing numbered {after_seq} "
            f"(its latest event is {last_seq})"
        )
