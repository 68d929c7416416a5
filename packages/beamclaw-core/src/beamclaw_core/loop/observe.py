"""The obs events that mark how a turn ended, read off the client events that end it.

Invariant: each turn that reaches a terminal client event emits exactly one of
``turn_complete`` (``TurnDone``), ``turn_error`` (``TurnError``) or ``turn_cancelled``
(``Cancelled``), with the turn's wall-clock duration; ``turn_complete`` also carries the
turn's tokens and cost (what ``/metrics`` counts). ``LimitReached`` adds
``turn_limit_reached`` before its ``TurnDone``. Other client events emit nothing here.
"""

from __future__ import annotations

from beamclaw_core.loop.turn_events import Cancelled, LimitReached, TurnDone, TurnError, TurnEvent
from beamclaw_obs import EventType, emit


def observe_turn_event(event: TurnEvent, started_at: float | None, now: float) -> None:
    """Emit the obs event ``event`` stands for, if any.

    ``started_at``: when the turn began (its ``Turn.started_at``, same clock as ``now``);
    None when unknown, then no duration is reported.
    """
    if not isinstance(event, TurnDone | TurnError | Cancelled | LimitReached):
        return
    ids: dict[str, object] = {"session_id": event.session_id, "turn_id": event.turn_id}
    if isinstance(event, LimitReached):
        emit(EventType.TURN_LIMIT_REACHED, **ids, limit=event.limit)
        return
    if started_at is not None:
        ids["total_duration_ms"] = round(max(0.0, now - started_at) * 1000, 1)
    if isinstance(event, TurnDone):
        usage = event.usage
        emit(
            EventType.TURN_COMPLETE,
            **ids,
            model=event.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            cost_usd=usage.cost_usd,
            usage_estimated=usage.estimated,
        )
    elif isinstance(event, TurnError):
        emit(EventType.TURN_ERROR, **ids, kind=event.kind)
    else:
        emit(EventType.TURN_CANCELLED, **ids, reason=event.reason)
