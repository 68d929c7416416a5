"""Settling a dead gateway's idempotency key from what its turn committed.

Invariants: a key's turn is found by its user message, marked with the key's
``source_message_id`` (:func:`~beamclaw_gateway.idempotency.turn_ref`) or naming the
turn's run id in ``meta["run_ids"]``; the turn's answer is every assistant text from
there to the next user message, joined as the loop joins them (a blank line between),
and it counts as committed only when the turn's last assistant message asks for no
tool. A message still queued (a restart resumes queued messages) or a turn still
running here is :data:`~beamclaw_gateway.idempotency.RUNNING`: releasing its key would
run it twice. Anything else (an interrupted or failed turn) committed no answer: the key
is released and the retry runs afresh. The replay has the OpenAI shape and status code
of a live answer. The queue is read before the history, so a message moving from one to
the other between the two reads is seen in the second.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from beamclaw_core import Message, Role, Usage
from beamclaw_core.api import Core
from beamclaw_core.sessions import UnknownSessionError
from beamclaw_gateway.idempotency import RUNNING, Orphan, Settlement, StoredAnswer, turn_ref
from beamclaw_gateway.openai_models import ChatCompletion


@dataclass(frozen=True, slots=True)
class CommittedTurn:
    """A turn's committed answer as the conversation store holds it."""

    turn_id: str
    text: str
    usage: Usage
    length: bool
    """The turn ended at a limit (``finish_reason: "length"``)."""


def _marks(message: Message, ref: str, turn_id: str | None) -> bool:
    if message.role is not Role.USER:
        return False
    if message.meta.get("source_message_id") == ref:
        return True
    runs = message.meta.get("run_ids")
    return turn_id is not None and isinstance(runs, list) and turn_id in runs


def _marked(messages: Sequence[Message], ref: str, turn_id: str | None) -> int | None:
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if _marks(messages[i], ref, turn_id)),
        None,
    )


def awaits_answer(messages: Sequence[Message], ref: str, turn_id: str | None) -> bool:
    """The turn's user message is the session's last one and nothing answered it yet."""
    start = _marked(messages, ref, turn_id)
    if start is None or committed_turn(messages, ref, turn_id) is not None:
        return False
    return all(m.role is not Role.USER for m in messages[start + 1 :])


def committed_turn(
    messages: Sequence[Message], ref: str, turn_id: str | None
) -> CommittedTurn | None:
    """The answer of the last turn marked by ``ref`` or ``turn_id``; None if uncommitted."""
    start = _marked(messages, ref, turn_id)
    if start is None:
        return None
    user = messages[start]
    runs = user.meta.get("run_ids")
    run_id = turn_id or (str(runs[0]) if isinstance(runs, list) and runs else ref)
    texts: list[str] = []
    usage = Usage()
    last: Message | None = None
    for message in messages[start + 1 :]:
        if message.role is Role.USER:
            break
        if message.role is Role.ASSISTANT:
            last = message
            if message.text:
                texts.append(message.text)
            if message.usage is not None:
                usage = usage + message.usage
    if last is None or last.tool_calls:
        return None
    return CommittedTurn(run_id, "\n\n".join(texts), usage, "limit" in last.meta)


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
