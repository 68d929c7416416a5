"""The tool-call fallback chain's behaviour table (seed 001 / ADR-005)."""

from __future__ import annotations

from typing import Any

import pytest

from beamclaw_core.parsing import make_id_factory, parse_tool_calls
from beamclaw_tools import ToolCall

FENCE = "```"

TABLE: list[tuple[str, str, list[tuple[str, dict[str, Any]]], str]] = [
    # (text, source, [(name, args)], remaining text)
    (
        '<tool_call><name>read</name><args>{"path": "a.txt"}</args></tool_call>',
        "xml",
        [("read", {"path": "a.txt"})],
        "",
    ),
    (
        "Sure. <toolcall><name>ls</name><arguments>{}</arguments></toolcall> Done.",
        "xml",
        [("ls", {})],
        "Sure.  Done.",
    ),
    ('<invoke><name>x</name><args>{"n": 1}</args></invoke>', "xml", [("x", {"n": 1})], ""),
    (
        '<tool_call>{"name": "search", "arguments": {"q": "otp"}}</tool_call>',
        "xml",
        [("search", {"q": "otp"})],
        "",
    ),
    (
        '<invoke name="bash"><parameter name="cmd">ls -la</parameter>'
        '<parameter name="timeout">5</parameter></invoke>',
        "xml",
        [("bash", {"cmd": "ls -la", "timeout": 5})],
        "",
    ),
    (
        "<TOOL_CALL><name>a</name><args>{}</args></TOOL_CALL>"
        "<tool_call><name>b</name><args>{}</args></tool_call>",
        "xml",
        [("a", {}), ("b", {})],
        "",
    ),
    (
        f'Running:\n{FENCE}json\n{{"tool": "read", "args": {{"path": "x"}}}}\n{FENCE}',
        "markdown",
        [("read", {"path": "x"})],
        "Running:",
    ),
    (
        f'{FENCE}json\n{{"name": "w", "arguments": {{"k": "v"}}}}\n{FENCE}',
        "markdown",
        [("w", {"k": "v"})],
        "",
    ),
    (
        f'{FENCE}JSON\n{{"tool": "a", "args": {{}}}}\n{FENCE} and {FENCE}json\n'
        f'{{"tool": "b", "args": {{}}}}\n{FENCE}',
        "markdown",
        [("a", {}), ("b", {})],
        "and",
    ),
]

NONE_CASES = [
    'Here is JSON: {"tool": "read", "args": {"path": "x"}}',  # free text: never
    '{"name": "read", "arguments": {}}',
    f'{FENCE}json\n{{"data": [1, 2, 3]}}\n{FENCE}',  # json block without tool/name + args
    f'{FENCE}python\n{{"tool": "a", "args": {{}}}}\n{FENCE}',  # not a json fence
    f"{FENCE}\n<tool_call><name>x</name><args>{{}}</args></tool_call>\n{FENCE}",  # example
    "<tool_call><args>{}</args></tool_call>",  # no name
    "plain answer",
    "",
]


@pytest.mark.parametrize(("text", "source", "calls", "rest"), TABLE)
def test_behaviour_table(
    text: str, source: str, calls: list[tuple[str, dict[str, Any]]], rest: str
) -> None:
    parsed = parse_tool_calls(text)
    assert parsed.source == source
    assert [(c.name, c.args) for c in parsed.calls] == calls
    assert parsed.text == rest
    assert all(c.id.startswith("call_") for c in parsed.calls)
    assert len({c.id for c in parsed.calls}) == len(parsed.calls)


@pytest.mark.parametrize("text", NONE_CASES)
def test_never_extracts_from_free_text(text: str) -> None:
    parsed = parse_tool_calls(text)
    assert parsed.calls == ()
    assert parsed.source == "none"
    assert parsed.text == text


def test_native_calls_win_and_get_ids_when_missing() -> None:
    native = (ToolCall(id="", name="a", args={"x": 1}), ToolCall(id="keep", name="b"))
    parsed = parse_tool_calls("<tool_call><name>z</name><args>{}</args></tool_call>", native)
    assert parsed.source == "native"
    assert [c.name for c in parsed.calls] == ["a", "b"]
    assert parsed.calls[0].id.startswith("call_")
    assert parsed.calls[1].id == "keep"


def test_xml_wins_over_markdown() -> None:
    text = (
        f"<tool_call><name>x</name><args>{{}}</args></tool_call>\n{FENCE}json\n"
        f'{{"tool": "y", "args": {{}}}}\n{FENCE}'
    )
    parsed = parse_tool_calls(text)
    assert parsed.source == "xml"
    assert [c.name for c in parsed.calls] == ["x"]


def test_malformed_args_are_kept_raw() -> None:
    parsed = parse_tool_calls("<tool_call><name>r</name><args>{oops</args></tool_call>")
    [call] = parsed.calls
    assert (call.args, call.raw_args) == ({}, "{oops")
    parsed = parse_tool_calls("<tool_call><name>r</name><args>[1, 2]</args></tool_call>")
    assert parsed.calls[0].raw_args == "[1, 2]"


def test_ids_are_deterministic_and_seedable() -> None:
    text = '<tool_call><name>r</name><args>{"a": 1}</args></tool_call>'
    assert parse_tool_calls(text).calls == parse_tool_calls(text).calls
    one = parse_tool_calls(text, id_factory=make_id_factory("turn-1")).calls[0].id
    two = parse_tool_calls(text, id_factory=make_id_factory("turn-2")).calls[0].id
    assert one != two

    def numbered(index: int, name: str, arguments: str) -> str:
        return f"{name}-{index}-{arguments}"

    assert parse_tool_calls(text, id_factory=numbered).calls[0].id == 'r-0-{"a":1}'
