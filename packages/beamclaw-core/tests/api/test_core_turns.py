"""Core end to end with the scripted provider: multi-step tool turns, streaming, history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import TextChunk, ToolFinished, ToolStarted, TurnDone
from beamclaw_core.loop.history import history_problems
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, CallTools, Reply, ScriptedProvider

from .conftest import EchoTool

ADDR = SessionAddress("local:ann", "default", "tui")


async def test_multi_step_tool_turn_streams_and_persists(make_core: Callable[..., Any]) -> None:
    echo = EchoTool()
    provider = ScriptedProvider(
        [
            CallTools(
                (CallTool("echo", {"text": "a"}), CallTool("echo", {"text": "b"})),
                text="Let me check.",
            ),
            CallTool("echo", {"text": "c"}),
            Reply("All done: a, b and c are fine and that is the whole answer of this turn."),
        ],
        chunk_size=5,
    )
    core: Core = make_core(provider, echo)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "check things")
    events = [e async for e in handle.events()]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.text == (
        "Let me check.\n\nAll done: a, b and c are fine and that is the whole answer of this turn."
    )
    assert [c["text"] for c in echo.calls] == ["a", "b", "c"]
    assert [e.tool for e in events if isinstance(e, ToolStarted)] == ["echo"] * 3
    assert len([e for e in events if isinstance(e, ToolFinished)]) == 3
    chunks = [e.text for e in events if isinstance(e, TextChunk)]
    assert len(chunks) > 1, "text must stream progressively"
    assert "".join(chunks) == done.text
    history = await core.history(handle.session_id)
    assert history_problems(history) == []
    assert [m.role.value for m in history] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    # The second LLM call saw the tool results of the first.
    assert [m.role.value for m in provider.calls[1].messages][-3:] == ["assistant", "tool", "tool"]


async def test_history_restored_after_restart(make_core: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("first"), Reply("second")])
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    assert await (await core.send(ADDR, "one")).text() == "first"
    await core.stop()
    core2: Core = make_core(provider)
    await core2.start(maintenance=False)
    assert await (await core2.send(ADDR, "two")).text() == "second"
    texts = [m.text for m in provider.calls[1].messages]
    assert texts[-3:] == ["one", "first", "two"]
