"""What a turn committed, found in a session's history after a crash (pure).

A caller that started a turn marked its user message — with ``source_message_id``
(a scheduler fire, an idempotency key) or by the run id the lane put in
``meta["run_ids"]`` — and, after a restart, asks what that turn left behind.

Invariants: the turn is that of the *last* user message so marked; its answer is every
assistant text from there to the next user message, joined with a blank line as the loop
joins them, with the usage of those messages summed; it counts as committed only when the
last of those assistant messages asks for no tool (the turn ended). Otherwise there is
none (yet): the turn is still running, or it was interrupted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from beamclaw_core.messages import Message, Role, Usage

__all__ = ["CommittedTurn", "committed_turn", "marked_turn"]


@dataclass(frozen=True, slots=True)
class CommittedTurn:
    """A turn's committed answer as the conversation store holds it."""

    turn_id: str
    """``turn_id`` when given, else the marked message's first run id, else ``ref``."""
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


def marked_turn(messages: Sequence[Message], ref: str, turn_id: str | None = None) -> int | None:
    """The index of the last user message marked by ``ref`` (or naming ``turn_id``)."""
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if _marks(messages[i], ref, turn_id)),
        None,
    )


def committed_turn(
    messages: Sequence[Message], ref: str, turn_id: str | None = None
) -> CommittedTurn | None:
    """The answer of the last turn marked by ``ref`` or ``turn_id``; None if uncommitted."""
    start = marked_turn(messages, ref, turn_id)
    if start is None:
        return None
    runs = messages[start].meta.get("run_ids")
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
