"""Compaction: the split keeps tool pairs, summaries replace the old view, failures trim."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from beamclaw_core.api import Core
from beamclaw_core.compaction import split_point
from beamclaw_core.loop import Compacted
from beamclaw_core.loop.history import history_problems
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import Capabilities, ErrorKind
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.store import StoredMessage
from beamclaw_core.testing import CallTool, Fail, Reply, ScriptedProvider
from beamclaw_tools import ToolCall

from .conftest import EchoTool

ADDR = SessionAddress("local:ann", "default", "tui")


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    out: list[Message] = []
    for i in range(draw(st.integers(1, 12))):
        out.append(Message.user("u" * draw(st.integers(1, 200))))
        n = draw(st.integers(0, 3))
        calls = tuple(ToolCall(id=f"{i}-{k}", name="t") for k in range(n))
        out.append(Message.assistant("a" * draw(st.integers(0, 200)), tool_calls=calls))
        out.extend(Message.tool(c.id, "t", "r" * draw(st.integers(1, 300))) for c in calls)
        if calls:
            out.append(Message.assistant("done"))
    return out


@given(histories(), st.integers(1, 400))
def test_split_never_separates_a_call_from_its_results(history: list[Message], target: int) -> None:
    rows = [StoredMessage(i + 1, "message", m, {}, 0.0) for i, m in enumerate(history)]
    cut = split_point(rows, target)
    kept = history[cut:]
    if cut:
        assert kept[0].role is not Role.TOOL
    assert history_problems(kept) == []
    assert history_problems(history[:cut]) == []


def small_window_provider(script: list[Any]) -> ScriptedProvider:
    return ScriptedProvider(script, capabilities=Capabilities(context_window=600), repeat_last=True)


async def run_turns(core: Core, n: int) -> list[Any]:
    events: list[Any] = []
    for i in range(n):
        handle = await core.send(ADDR, f"message {i} " + "words " * 40)
        events.extend([e async for e in handle.events()])
    return events


async def test_compaction_summarises_and_keeps_pairs(make_core: Callable[..., Any]) -> None:
    echo = EchoTool()
    provider = small_window_provider([CallTool("echo", {"text": "x" * 50}), Reply("answer " * 30)])
    summariser = ScriptedProvider([Reply("They talked about messages.")], repeat_last=True)
    core: Core = make_core(provider, echo, compaction_provider=summariser)
    await core.start(maintenance=False)
    events = await run_turns(core, 4)
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert compacted
    assert not compacted[0].fallback
    assert compacted[0].after_tokens < compacted[0].before_tokens
    last_request = provider.calls[-1].messages
    assert any(
        m.role is Role.SYSTEM and m.text.startswith("[Conversation summary]") for m in last_request
    )
    assert history_problems([m for m in last_request if m.role is not Role.SYSTEM]) == []
    session_id = core.session_id(ADDR)
    raw = await core.history(session_id)
    assert len(raw) > len(await core.history(session_id, view=True))
    assert next(m.text for m in raw if m.role is Role.USER).startswith("message 0")


async def test_summary_failure_trims_deterministically(make_core: Callable[..., Any]) -> None:
    provider = small_window_provider([Reply("answer " * 30)])
    summariser = ScriptedProvider([Fail(ErrorKind.NETWORK)], repeat_last=True)
    core: Core = make_core(provider, compaction_provider=summariser)
    await core.start(maintenance=False)
    events = await run_turns(core, 4)
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert compacted
    assert compacted[0].fallback
    assert not any(m.text.startswith("[Conversation summary]") for m in provider.calls[-1].messages)


async def test_a_compaction_at_a_turns_start_finds_its_message_stored(
    make_core: Callable[..., Any],
) -> None:
    # the message is committed with the turn's first transition, before the compaction
    # that measuring its context starts: every summary marker follows the message of the
    # turn that compacted
    provider = small_window_provider([Reply("answer " * 30)])
    summariser = ScriptedProvider([Reply("They talked about messages.")], repeat_last=True)
    core: Core = make_core(provider, compaction_provider=summariser)
    await core.start(maintenance=False)
    events = await run_turns(core, 4)
    assert [e for e in events if isinstance(e, Compacted)], "a turn compacted at its start"
    rows = await core.store.messages(core.session_id(ADDR))
    kinds = [r.message.role.value if r.message is not None else r.kind for r in rows]
    summaries = [i for i, kind in enumerate(kinds) if kind == "summary"]
    assert summaries and all(kinds[i - 1] == "user" for i in summaries), kinds
