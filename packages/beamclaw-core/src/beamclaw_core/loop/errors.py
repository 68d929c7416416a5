"""Errors of the agentic loop."""

from __future__ import annotations

from beamclaw_core.errors import BeamclawCoreError


class LoopError(BeamclawCoreError):
    """Base of the loop's errors."""


class IllegalTransition(LoopError):  # noqa: N818 - the name the design documents use
    """``event`` is not accepted in ``state`` (e.g. a user message while the agent is busy).

    The machine raises it instead of guessing; the session lane queues user messages so
    that, in normal operation, only stale or misrouted events are ever refused.
    """

    def __init__(self, state: str, event: str, reason: str) -> None:
        self.state = state
        self.event = event
        self.reason = reason
        super().__init__(f"{event} is illegal in state {state}: {reason}")


class EventDecodeError(LoopError, ValueError):
    """A dict is not the wire form of a turn event (unknown ``type``, missing ids, bad field)."""
