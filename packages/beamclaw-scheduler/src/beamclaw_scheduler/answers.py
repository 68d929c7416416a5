"""Finding a job's answer in its session after a crash (pure).

Invariant: the answer is that of the last user message marked with the fire's
``source_message_id`` (:func:`beamclaw_core.committed.committed_turn`: the turn ended,
its assistant texts joined); otherwise there is none (yet).
"""

from __future__ import annotations

from collections.abc import Sequence

from beamclaw_core import Message
from beamclaw_core.committed import committed_turn


def committed_answer(messages: Sequence[Message], ref: str) -> str | None:
    """The committed answer of the turn marked ``ref`` in ``messages``; None if none."""
    turn = committed_turn(messages, ref)
    return None if turn is None else turn.text
