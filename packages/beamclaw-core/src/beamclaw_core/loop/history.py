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


class HistoryRepair:
    """:func:`repair_history`, fed incrementally: ``feed`` the messages appended since the
    last call, ``result`` is the repair of everything fed so far.

    The repair is a left-to-right scan whose only state is the output so far and the tool
    calls still unanswered, so feeding ``a`` then ``b`` is the repair of ``a + b``; a
    history that grows by appending (a conversation's view) is repaired once per message,
    not once per request. ``result`` fills the still-unanswered calls at the end without
    consuming them (a later answer is still accepted).
    """

    def __init__(self, text: str = INTERRUPTED_TEXT) -> None:
        self._text = text
        self._out: list[Message] = []
        self._pending: list[tuple[str, str]] = []  # (call id, tool name) to answer, in order
        self.fed = 0
        """How many messages were fed."""

    def _synthetic(self, call_id: str, name: str) -> Message:
        return Message.tool(call_id, name, self._text, is_error=True, meta={"synthetic": True})

    def feed(self, messages: Sequence[Message]) -> HistoryRepair:
        out, pending = self._out, self._pending
        for m in messages:
            if m.role is Role.TOOL:
                if not any(call_id == m.tool_call_id for call_id, _ in pending):
                    continue
                while pending and pending[0][0] != m.tool_call_id:
                    out.append(self._synthetic(*pending.pop(0)))
                pending.pop(0)
                out.append(m)
                continue
            out.extend(self._synthetic(call_id, name) for call_id, name in pending)
            pending.clear()
            if m.role is Role.ASSISTANT and m.tool_calls:
                first = {c.id: i for i, c in reversed(list(enumerate(m.tool_calls)))}
                if len(first) < len(m.tool_calls):  # one result cannot answer two calls
                    kept = tuple(c for i, c in enumerate(m.tool_calls) if first[c.id] == i)
                    m = m.model_copy(update={"tool_calls": kept})
                pending.extend((c.id, c.name) for c in m.tool_calls)
            out.append(m)
        self.fed += len(messages)
        return self

    def result(self) -> list[Message]:
        """The valid history of everything fed (a new list; its messages are shared)."""
        return [*self._out, *(self._synthetic(c, n) for c, n in self._pending)]


def repair_history(messages: Sequence[Message], text: str = INTERRUPTED_TEXT) -> list[Message]:
    """A valid history: orphan tool results dropped, missing results filled synthetically,
    a call repeating an earlier call's id in the same message dropped.

    A valid input is returned unchanged (same messages, same order).
    """
    return HistoryRepair(text).feed(messages).result()
