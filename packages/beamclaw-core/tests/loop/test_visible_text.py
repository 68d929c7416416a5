"""Streamed visible text: the incremental tracker says exactly what a full re-strip would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_core.loop.llm_call import VisibleText
from beamclaw_core.parsing import strip_thinking


class Reference:
    """The straightforward version: strip the whole text again after every delta."""

    def __init__(self) -> None:
        self.raw = ""
        self.sent = 0

    def add(self, text: str) -> str:
        self.raw += text
        visible = strip_thinking(self.raw, fallback=False).text
        lt = visible.rfind("<")
        if lt >= 0 and len(visible) - lt < 16:
            visible = visible[:lt]
        if len(visible) <= self.sent:
            return ""
        out = visible[self.sent :]
        self.sent = len(visible)
        return out


PIECES = st.sampled_from(
    [
        "Hello ",
        "world",
        "<think>",
        "</think>",
        "<thi",
        "nk>",
        "</thinking>",
        "<final>",
        "`code <think>`",
        "a < b",
        "<",
        " ",
        "\n",
        "x" * 20,
        "  <  think >",
        "done.",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=30), st.data())
def test_incremental_equals_full_restrip(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=12))))
    deltas = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if b > a]
    fast, slow = VisibleText(), Reference()
    assert [fast.add(d) for d in deltas] == [slow.add(d) for d in deltas]


def test_a_long_untagged_answer_streams_every_character_once() -> None:
    tracker = VisibleText()
    parts = [f"word{i} " for i in range(5000)]
    streamed = "".join(tracker.add(p) for p in parts)
    assert streamed == "".join(parts)
