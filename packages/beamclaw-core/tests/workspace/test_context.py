"""The /context token breakdown and the token estimator."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beamclaw_core.messages import Message
from beamclaw_core.workspace import (
    ContextBreakdown,
    build_system_prompt,
    context_breakdown,
    create_agent,
    estimate_message_tokens,
    estimate_tokens,
    estimate_tool_tokens,
)
from beamclaw_tools import ImagePart, ToolCall, ToolDef

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
TOOLS = (
    ToolDef(
        name="read_file",
        description="Read a file from the workspace.",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
    ToolDef(name="bash", description="Run a shell command."),
)
HISTORY = (
    Message.user("What is in notes.txt?"),
    Message.assistant("", tool_calls=(ToolCall(id="c1", name="read_file", args={"path": "n"}),)),
    Message.tool("c1", "read_file", "hello world " * 50),
    Message.assistant("It says hello world fifty times."),
)


def test_estimate_tokens_is_four_bytes_per_token_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("\u65e5\u672c\u8a9e\u6587") == 3  # 12 bytes of CJK


@given(st.text(), st.text())
def test_estimate_is_monotone(a: str, b: str) -> None:
    assert estimate_tokens(a + b) >= estimate_tokens(a)


def test_message_estimate_counts_tool_calls_and_images() -> None:
    plain = Message.assistant("x")
    with_call = Message.assistant(
        "x", tool_calls=(ToolCall(id="c1", name="bash", args={"cmd": "ls -la /tmp"}),)
    )
    assert estimate_message_tokens(with_call) > estimate_message_tokens(plain)
    image = Message.user((ImagePart(media_type="image/png", data="AAAA"),))
    assert estimate_message_tokens(image) >= 800


def test_tool_estimate_grows_with_schema() -> None:
    small, big = TOOLS[1], TOOLS[0]
    assert estimate_tool_tokens(big) > estimate_tool_tokens(small) > 0


def test_breakdown_sums_to_the_window() -> None:
    create_agent("ctx")
    prompt = build_system_prompt(
        "ctx", now=NOW, last_message_at=None, skills_section="## Skills\n" + "- skill\n" * 40
    )
    breakdown = context_breakdown(
        system_prompt=prompt, tools=TOOLS, history=HISTORY, context_window=32_000
    )
    assert breakdown.bootstrap > 0
    assert breakdown.skills == estimate_tokens(("## Skills\n" + "- skill\n" * 40).strip("\n"))
    assert breakdown.tools == sum(estimate_tool_tokens(t) for t in TOOLS)
    assert breakdown.history > 0
    assert breakdown.over_by == 0
    assert sum(tokens for _, tokens in breakdown.rows()) == 32_000
    assert [part for part, _ in breakdown.rows()] == [
        "bootstrap",
        "skills",
        "tools",
        "history",
        "free",
    ]
    rendered = breakdown.render()
    assert "Context window: 32,000 tokens" in rendered
    assert "free" in rendered


def test_breakdown_over_the_window() -> None:
    breakdown = context_breakdown(
        system_prompt=None, tools=TOOLS, history=HISTORY, context_window=10
    )
    assert breakdown.free == 0
    assert breakdown.over_by == breakdown.used - 10
    assert sum(t for _, t in breakdown.rows()) == breakdown.window + breakdown.over_by
    assert "over by" in breakdown.render()


def test_breakdown_rejects_non_positive_window() -> None:
    with pytest.raises(ValueError, match="context_window"):
        context_breakdown(system_prompt=None, tools=(), history=(), context_window=0)


@given(
    st.lists(st.text(max_size=200), max_size=8),
    st.integers(min_value=1, max_value=5_000),
)
def test_breakdown_invariant(texts: list[str], window: int) -> None:
    history = [Message.user(t) for t in texts]
    b = context_breakdown(system_prompt=None, tools=TOOLS, history=history, context_window=window)
    assert isinstance(b, ContextBreakdown)
    assert b.bootstrap + b.skills + b.tools + b.history + b.free == window + b.over_by
    assert b.free == 0 or b.over_by == 0
