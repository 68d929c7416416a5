"""Settling a dead gateway's idempotency key from what its turn committed.

Invariants: a key's turn is found by its user message, marked with the key's
``source_message_id`` (:func:`~beamclaw_gateway.idempotency.turn_ref`) or naming the
turn's run id in ``meta["run_ids"]``; what it committed is
:func:`beamclaw_core.committed.committed_turn`'s answer. A message still queued (a restart resumes queued messages) or a turn still
running here is :data:`~beamclaw_gateway.idempotency.RUNNING`: releasing its key would
run it twice. Anything else (an interrupted or failed turn) committed no answer: the key
is released and the retry runs afresh. The replay has the OpenAI shape and status code
of a live answer. The queue is read before the history, so a message moving from one to
the other between the two reads is seen in the second.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from beamclaw_core import Message, Role
from beamclaw_core.api import Core
from beamclaw_core.committed import committed_turn, marked_turn
from beamclaw_core.sessions import UnknownSessionError
from beamclaw_gateway.idempotency import RUNNING, Orphan, Settlement, StoredAnswer, turn_ref


def awaits_answer(messages: Sequence[Message], ref: str, turn_id: str | None) -> bool:
    """The turn's user message is the session's last one and nothing answered it yet."""
    start = marked_turn(messages, ref, turn_id)
    if start is None or committed_turn(messages, ref, turn_id) is not None:
        return False
    return all(m.role is not Role.USER for m in messages[start + 1 :])


class CommittedAnswers:
    """The :data:`~beamclaw_gateway.idempotency.Settle` port over the running Core."""

    def __init__(self, core: Callable[[], Core]) -> None:
        self._core = core

    async def __call__(self, orphan: Orphan) -> Settlement:
        if orphan.session_id is None:
            return None
        core = self._core()
        ref = turn_ref(orphan.key)
        for queued in await core.store.pending(orphan.session_id):
            if queued.id == orphan.turn_id or queued.payload.get("source_message_id") == ref:
                return RUNNING
        history = await core.history(orphan.session_id)
        turn = committed_turn(history, ref, orphan.turn_id)
        if turn is None:
            if awaits_answer(history, ref, orphan.turn_id) and await self._busy(orphan.session_id):
                return RUNNING
            return None
        # the OpenAI models are the /v1 routes' (built on first use), not a start-up cost
        from beamclaw_gateway.openai_models import ChatCompletion

        body = ChatCompletion.body(
            f"chatcmpl-{turn.turn_id}",
            int(orphan.created_at),
            orphan.model or "beamclaw",
            turn.text,
            "length" if turn.length else "stop",
            turn.usage,
        )
        return StoredAnswer(200, body)

    async def _busy(self, session_id: str) -> bool:
        try:
            status = await self._core().status(session_id)
        except UnknownSessionError:
            return False
        return status.state != "idle" or status.queued > 0
