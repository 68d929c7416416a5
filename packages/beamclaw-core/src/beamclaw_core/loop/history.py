"""History validity (DESIGN.md §3 invariant 2): check and, defensively, repair.

A history is *valid* when every assistant tool call is answered by exactly one tool
message with its id, in the order the calls were made, immediately after the assistant
message (before any other user or assistant message), and no tool message answers
nothing. Pure functions; the loop's view builder applies :func:`repair_history` as a last
line of defence so a provider never receives a malformed history.

The repair also shows tool results' images: after a block of tool results (the whole
block, so the pairing above holds) of which any carries images, it adds one user
message holding those images, each group labelled with its tool call
(:func:`tool_images_message`, marked :data:`~beamclaw_core.messages.TOOL_IMAGES`). A
Chat Completions ``tool`` message carries only text, so that is where an
OpenAI-compatible model sees them; a wire whose tool results hold images (Anthropic)
sends the message as nothing. It is derived, never stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from beamclaw_core.messages import TOOL_IMAGES, Message, Role
from beamclaw_tools.types import ContentPart, TextPart

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


def tool_images_message(block: Sequence[Message]) -> Message:
    """The user message showing the images of ``block``'s tool results, each group
    after a line naming the tool call that returned it."""
    parts: list[ContentPart] = []
    for m in block:
        label = f"[Images returned by tool call {m.tool_call_id} ({m.name}):]"
        parts.append(TextPart(text=label if not parts else "\n" + label))
        parts.extend(m.images)
    return Message.user(tuple(parts), meta={TOOL_IMAGES: [m.tool_call_id for m in block]})


class HistoryRepair:
    """:func:`repair_history`, fed incrementally: ``feed`` the messages appended since the
    last call, ``result`` is the repair of everything fed so far.

    The repair is a left-to-right scan whose only state is the output so far and the tool
    calls still unanswered, so feeding ``a`` then ``b`` is the repair of ``a + b``; a
    history that grows by appending (a conversation's view) is repaired once per message,
    not once per request. ``result`` fills the still-unanswered calls at the end without
    consuming them (a later answer is still accepted).

    The images of a block of tool results are shown after the block (see the module
    docstring) by one message built once per block: ``result`` returns the same object
    while the block is open and ``feed`` places it when the block closes, so a request
    continuing the last one shares its messages (the request folds match by identity).
    """

    def __init__(self, text: str = INTERRUPTED_TEXT) -> None:
        self._text = text
        self._out: list[Message] = []
        self._pending: list[tuple[str, str]] = []  # (call id, tool name) to answer, in order
        self._imaged: list[Message] = []
        """The open block's tool results that carry images."""
        self._shown: Message | None = None
        """``tool_images_message(_imaged)``, once built."""
        self.fed = 0
        """How many messages were fed."""

    def _images_shown(self) -> list[Message]:
        if not self._imaged:
            return []
        if self._shown is None:
            self._shown = tool_images_message(self._imaged)
        return [self._shown]

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
                if m.images:
                    self._imaged.append(m)
                    self._shown = None
                continue
            out.extend(self._synthetic(call_id, name) for call_id, name in pending)
            pending.clear()
            out.extend(self._images_shown())
            self._imaged, self._shown = [], None
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
        return [
            *self._out,
            *(self._synthetic(c, n) for c, n in self._pending),
            *self._images_shown(),
        ]


def repair_history(messages: Sequence[Message], text: str = INTERRUPTED_TEXT) -> list[Message]:
    """A valid history: orphan tool results dropped, missing results filled synthetically,
    a call repeating an earlier call's id in the same message dropped, tool results'
    images shown after their block.

    A valid input without tool images is returned unchanged (same messages, same order).
    """
    return HistoryRepair(text).feed(messages).result()
