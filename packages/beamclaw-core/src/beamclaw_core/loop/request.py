"""The messages of an LLM request about a conversation: built here, and only here.

A turn's LLM call, the memory flush of ``/new`` and of compaction, and the ``/context``
estimate all send (or measure) the same thing: the system prompt, then the conversation
summary when compaction wrote one, then the view's history repaired so a provider never
receives an unanswered tool call. Pure: the caller fetches the system prompt and view.
"""

from __future__ import annotations

from collections.abc import Sequence

from beamclaw_core.loop.history import repair_history
from beamclaw_core.messages import Message
from beamclaw_core.store import View

SUMMARY_PREFIX = "[Conversation summary]: "
"""Starts the system message that carries the compaction summary."""


def request_messages(
    system: Sequence[Message], view: View, history: Sequence[Message] | None = None
) -> list[Message]:
    """``system``, the summary of ``view`` (if any) as a system message, and its repaired
    history, in that order.

    ``history``: ``repair_history(view.messages)`` when the caller keeps it already
    (:meth:`~beamclaw_core.loop.executor.ViewCache.history` repairs incrementally).
    """
    messages = list(system)
    if view.summary:
        messages.append(Message.system(SUMMARY_PREFIX + view.summary))
    messages.extend(repair_history(view.messages) if history is None else history)
    return messages
