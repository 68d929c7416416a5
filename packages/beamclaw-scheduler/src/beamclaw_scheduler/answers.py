"""Finding a job's answer in its session after a crash (pure).

Invariant: the answer is that of the last user message marked with the fire's
``source_message_id``: every assistant text from there to the next user message, joined
with a blank line as the loop joins them, and only when the last of those assistant
messages asks for no tool (the turn ended); otherwise there is none (yet).
"""

from __future__ import annotations

from collections.abc import Sequence

from beamclaw_core import Message, Role


def committed_answer(messages: Sequence[Message], ref: str) -> str | None:
    """The committed answer of the turn marked ``ref`` in ``messages``; None if none."""
    start = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if messages[i].role is Role.USER and messages[i].meta.get("source_message_id") == ref
        ),
        None,
    )
    if start is None:
        return None
    texts: list[str] = []
    last: Message | None = None
    for message in messages[start + 1 :]:
        if message.role is Role.USER:
            break
        if message.role is Role.ASSISTANT:
            last = message
            if message.text:
                texts.append(message.text)
    if last is None or last.tool_calls:
        return None
    return "\n\n".join(texts)
