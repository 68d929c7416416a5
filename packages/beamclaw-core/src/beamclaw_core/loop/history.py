"""History validity (DESIGN.md §3 invariant 2): check and, defensively, repair.

A history is *valid* when every assistant tool call is answered by exactly one tool
message with its id, in the order the calls were made, immediately after the assistant
message (before any other user or assistant message), and no tool message answers
nothing. Pure functions; the loop's view builder applies :func:`repair_history` as a last
line of defence so a provider never receives a malformed history.
"""

from __future__ import annotations

from collections.abc import Sequence

from beamclaw_core.messages import Message, Role

INTERRUPTED_TEXT = "Interrupted: no result was recorded for this tool call."


def history_problems(messages: Sequence[Message]) -> list[str]:
    """Every validity violation, described; empty when the history is valid."""
    problems: list[str] = []
    expected: list[str] = []
    for i, m in enumerate(messages):
        if m.role is Role.TOOL:
            if not expected:
                problems.append(f"#{i}: tool result {m.tool_call_id!r} answers no pending call")
            elif m.tool_call_id != expected[0]:
                problems.append(
                    f"#{i}: tool result {m.tool_call_id!r} out of order (expected {expected[0]!r})"
                )
                if m.tool_call_id in expected:
                    expected.remove(m.tool_call_id)
            else:
                expected.pop(0)
            continue
        if expected:
            problems.append(f"#{i}: {m.role.value} message before results for {expected}")
            expected = []
        if m.role is Role.ASSISTANT and m.tool_calls:
            ids = [c.id for c in m.tool_calls]
            if len(set(ids)) != len(ids):
                problems.append(f"#{i}: duplicate tool call ids {ids}")
            expected = ids
    if expected:
        problems.append(f"end: no results for {expected}")
    return problems


def is_valid_history(messages: Sequence[Message]) -> bool:
    return not history_problems(messages)


def repair_history(messages: Sequence[Message], text: str = INTERRUPTED_TEXT) -> list[Message]:
    """A valid history: orphan tool results dropped, missing results filled synthetically.

    A valid input is returned unchanged (same messages, same order).
    """
    out: list[Message] = []
    pending: list[tuple[str, str]] = []  # (call id, tool name) still to answer, in order

    def fill() -> None:
        for call_id, name in pending:
            out.append(Message.tool(call_id, name, text, is_error=True, meta={"synthetic": True}))
        pending.clear()

    for m in messages:
        if m.role is Role.TOOL:
            ids = [c for c, _ in pending]
            if m.tool_call_id not in ids:
                continue
            while pending and pending[0][0] != m.tool_call_id:
                call_id, name = pending.pop(0)
                out.append(
                    Message.tool(call_id, name, text, is_error=True, meta={"synthetic": True})
                )
            pending.pop(0)
            out.append(m)
            continue
        fill()
        out.append(m)
        if m.role is Role.ASSISTANT and m.tool_calls:
            seen: set[str] = set()
            for c in m.tool_calls:
                if c.id not in seen:
                    seen.add(c.id)
                    pending.append((c.id, c.name))
    fill()
    return out
