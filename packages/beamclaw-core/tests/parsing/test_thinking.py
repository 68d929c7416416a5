"""The thinking stripper's behaviour table (module docstring rules 1-6)."""

from __future__ import annotations

import pytest

from beamclaw_core.parsing import StrippedText, has_thinking_tags, strip_thinking

FENCE = "```"

TABLE = [
    # (input, visible text, reasoning) -- rule 6: no tags → identity
    ("Hello, plain text.", "Hello, plain text.", ""),
    ("  spaced  ", "  spaced  ", ""),
    # rule 1: every thinking tag name, any case, attributes
    ("Hello <think>internal</think> world!", "Hello  world!", "internal"),
    ("<thinking>plan</thinking>Answer", "Answer", "plan"),
    ("<thought>hm</thought>Answer", "Answer", "hm"),
    ("<antThinking>meta</antThinking>Answer", "Answer", "meta"),
    ("<THINK>x</THINK>Answer", "Answer", "x"),
    ("<think reason='a'>x</think >Answer", "Answer", "x"),
    ("< think >x</ think>Answer", "Answer", "x"),
    ("<think>a</think>mid<thinking>b</thinking>end", "midend", "a\n\nb"),
    ("<think>outer <think>inner</think> still</think>Answer", "Answer", "outer inner still"),
    # rule 2: final
    ("I reason here <final>42</final>", "42", "I reason here"),
    ("<think>x</think><final>Yes</final> trailing", "Yes", "x\n\ntrailing"),
    ("<final>open ended", "open ended", ""),
    ("<final>a</final> and <final>b</final>", "ab", "and"),
    ("stray </final> close", "stray  close", ""),
    # rule 3: code untouched
    (f"{FENCE}\n<think>x</think>\n{FENCE}\nok", f"{FENCE}\n<think>x</think>\n{FENCE}\nok", ""),
    ("Use `<think>` tags like `<final>`.", "Use `<think>` tags like `<final>`.", ""),
    (
        f"<think>hidden</think>\n{FENCE}python\nprint('<think>')\n{FENCE}",
        f"{FENCE}python\nprint('<think>')\n{FENCE}",
        "hidden",
    ),
    ("~~~\n<thought>kept</thought>\n~~~", "~~~\n<thought>kept</thought>\n~~~", ""),
    # rule 4: unclosed
    ("Answer first <think>then thoughts cut off", "Answer first", "then thoughts cut off"),
    ("reasoning before close</think>Answer", "Answer", "reasoning before close"),
]


@pytest.mark.parametrize(("text", "visible", "reasoning"), TABLE)
def test_behaviour_table(text: str, visible: str, reasoning: str) -> None:
    got = strip_thinking(text)
    assert (got.text, got.reasoning) == (visible, reasoning)
    assert not got.fallback_used


def test_unclosed_keep_mode_keeps_the_content() -> None:
    got = strip_thinking("Answer <think>not really thinking", unclosed="keep")
    assert got.text == "Answer not really thinking"


def test_empty_result_falls_back_to_the_reasoning() -> None:
    assert strip_thinking("<think>the whole answer</think>") == StrippedText(
        "the whole answer", "the whole answer", fallback_used=True
    )
    assert strip_thinking("<think>cut off").fallback_used
    assert strip_thinking("<think>x</think>", fallback=False) == StrippedText("", "x")


def test_only_tags_and_whitespace() -> None:
    assert strip_thinking("<think></think>   ") == StrippedText("", "")


def test_quick_check() -> None:
    assert has_thinking_tags("a <Thinking> b")
    assert not has_thinking_tags("a <thin> b <finality>")
    assert strip_thinking("<finality>x</finality>").text == "<finality>x</finality>"


def test_is_deterministic_and_idempotent_on_output() -> None:
    text = "<think>a</think>B <final>C</final>"
    assert strip_thinking(text) == strip_thinking(text)
    once = strip_thinking(text).text
    assert strip_thinking(once).text == once
