"""What makes a stored history acceptable to a provider, and what makes a later read of
it keep everything an earlier one showed.

Both take the OpenAI-shaped messages of ``GET /api/sessions/{id}`` and return problems
(empty when all is well), so a test can report every session's at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]


def provider_problems(messages: Sequence[Message]) -> list[str]:
    """Every assistant tool call is answered by exactly one tool result, in order, before
    any other message; no tool result lacks its call; ``seq`` strictly increases."""
    problems: list[str] = []
    pending: list[str] = []
    last_seq = -1
    for m in messages:
        seq = int(m.get("seq", -1))
        if seq <= last_seq:
            problems.append(f"seq {seq} after {last_seq}")
        last_seq = seq
        if m["role"] == "tool":
            if not pending:
                problems.append(f"seq {seq}: tool result without a call")
            elif m.get("tool_call_id") != pending[0]:
                problems.append(f"seq {seq}: answers {m.get('tool_call_id')}, not {pending[0]}")
                pending.pop(0)
            else:
                pending.pop(0)
            continue
        if pending:
            problems.append(f"seq {seq}: unanswered tool calls {pending} before a {m['role']}")
            pending = []
        if m["role"] == "assistant":
            pending = [c["id"] for c in m.get("tool_calls") or []]
    if pending:
        problems.append(f"history ends with unanswered tool calls {pending}")
    return problems


def _key(m: Message) -> tuple[Any, ...]:
    calls = tuple(c["id"] for c in m.get("tool_calls") or [])
    return (m.get("seq"), m["role"], str(m.get("content")), calls, m.get("tool_call_id"))


def lost_messages(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    """Messages of ``before`` that ``after`` no longer has unchanged (by seq, role,
    content, tool calls)."""
    kept = {_key(m) for m in after}
    return [f"lost or changed: {_key(m)}" for m in before if _key(m) not in kept]
