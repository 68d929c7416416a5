"""Through Core with a controlled clock: daily-hour and idle resets (seed 004 ADR-038),
idle and nightly maintenance compaction, and the in-chat commands."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.compaction import FLUSH_INSTRUCTIONS
from beamclaw_core.loop import (
    Accepted,
    ApprovalRequested,
    Cancelled,
    Compacted,
    Notice,
    TurnDone,
)
from beamclaw_core.providers import Capabilities, estimate_prompt_tokens
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_tools import Autonomy

from .conftest import EchoTool, VirtualTime, first, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


def local(day: int, hour: int, minute: int = 0) -> float:
    return dt.datetime(2026, 3, day, hour, minute).astimezone().timestamp()


def sent(provider: ScriptedProvider) -> list[str]:
    """Texts of the non-system messages of the latest LLM call."""
    return [m.text for m in provider.calls[-1].messages if m.role.value != "system"]


async def test_daily_hour_reset_starts_a_fresh_view(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two"), Reply("three")])
    core: Core = make_core(provider, settings=make_settings(reset={"daily_hour": 4}))
    vt.now = local(10, 2)
    await core.start(maintenance=False)
    assert await (await core.send(ADDR, "at two")).text() == "one"
    vt.now = local(10, 3, 59)
    assert await (await core.send(ADDR, "at 3:59")).text() == "two"
    assert sent(provider) == ["at two", "one", "at 3:59"], "no reset before the hour"
    vt.now = local(10, 4, 1)
    handle = await core.send(ADDR, "after four")
    notice = await first(handle.events(), Notice)
    assert notice.text == "Started a fresh session: daily reset at 04:00."
    assert await handle.text() == "three"
    assert sent(provider) == ["after four"]
    assert len(await core.history(handle.session_id)) == 6, "the record keeps everything"


async def test_idle_reset_after_idle_minutes(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two"), Reply("three")])
    core: Core = make_core(provider, settings=make_settings(reset={"idle_minutes": 30}))
    await core.start(maintenance=False)
    await (await core.send(ADDR, "first")).text()
    vt.jump(29 * 60)
    await (await core.send(ADDR, "second")).text()
    assert sent(provider) == ["first", "one", "second"]
    vt.jump(31 * 60)
    handle = await core.send(ADDR, "third")
    notice = await first(handle.events(), Notice)
    assert "idle for more than 30 minutes" in notice.text
    await handle.text()
    assert sent(provider) == ["third"]


def small_window() -> Capabilities:
    return Capabilities(context_window=400)


async def minutes(vt: VirtualTime, n: int) -> None:
    """Let ``n`` maintenance intervals (60 s) pass, one armed timer at a time."""
    for _ in range(n):
        await vt.until_timer(60)
        await vt.advance(60)


async def test_idle_and_nightly_maintenance_compaction(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider(
        [Reply("a long answer " * 12), Reply("another long answer " * 8)],
        capabilities=small_window(),
    )
    summariser = ScriptedProvider([Reply("summary one"), Reply("summary two")])
    settings = make_settings(
        loop={"compaction_threshold_pct": 100, "compaction_target_pct": 20},
        maintenance={
            "idle_compaction_minutes": 10,
            "nightly_hour": 3,
            "check_interval_seconds": 60,
        },
        session_ttl_seconds=0,
    )
    core: Core = make_core(provider, settings=settings, compaction_provider=summariser)
    await core.start(maintenance=True)
    handle = await core.send(ADDR, "tell me things " * 10)
    await handle.text()
    events = aiter(await core.subscribe(handle.session_id))
    await minutes(vt, 9)
    assert summariser.calls == [], "idle for 9 minutes: not yet"
    await minutes(vt, 1)
    idle = await first(events, Compacted)
    assert isinstance(idle, Compacted) and idle.summarized_messages >= 1
    view = await core.history(handle.session_id, view=True)
    assert view[-1].text.startswith("a long"), "the newest messages stay verbatim"
    await minutes(vt, 30)
    assert len(summariser.calls) == 1, "idle compaction runs once per idle period"

    vt.now = local(11, 2, 58)
    await vt.advance(0)  # the overdue maintenance pass runs; nothing new to compact
    await (await core.send(ADDR, "more please " * 10)).text()
    await minutes(vt, 1)
    assert len(summariser.calls) == 1
    await minutes(vt, 1)  # 03:00: the nightly pass compacts however recent the activity
    nightly = await first(events, Compacted)
    assert isinstance(nightly, Compacted)
    assert len(summariser.calls) == 2
    assert "summary one" in summariser.calls[1].messages[-1].text, "summaries chain"


async def test_new_flushes_memory_then_clears(make_core: Callable[..., Any]) -> None:
    memory = EchoTool("memory_store")
    provider = ScriptedProvider(
        [
            Reply("noted"),
            CallTool("memory_store", {"text": "ann likes tea"}),
            Reply("NO_REPLY"),
            Reply("hello again"),
        ]
    )
    core: Core = make_core(provider, memory)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "I like tea")).text()
    assert await (await core.send(ADDR, "/new")).text() == "Started a fresh session."
    flush = provider.calls[1]
    assert not flush.stream and flush.messages[-1].text == FLUSH_INSTRUCTIONS
    assert [t.name for t in flush.options.tools] == ["memory_store"]
    assert memory.calls == [{"text": "ann likes tea"}]
    assert await (await core.send(ADDR, "hi")).text() == "hello again"
    assert sent(provider) == ["hi"]


async def test_reset_status_context_and_stop(make_core: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("one"), Hang()])
    core: Core = make_core(provider, EchoTool())
    await core.start(maintenance=False)
    await (await core.send(ADDR, "first")).text()
    status = await (await core.send(ADDR, "/status")).text()
    assert "State: idle" in status and "Queued messages: 0" in status
    assert "Messages in context: 2" in status and "Model: scripted-model" in status
    context = await (await core.send(ADDR, "/context")).text()
    assert context.startswith("Context window: ")
    for row in ("bootstrap", "skills", "tools", "history", "free"):
        assert f"  {row}" in context
    assert await (await core.send(ADDR, "/stop")).text() == (
        "Nothing was running. Cleared 0 queued messages."
    )
    assert await (await core.send(ADDR, "/reset")).text() == "Session reset."
    assert "Messages in context: 0" in await (await core.send(ADDR, "/status")).text()
    assert len(await core.history(core.session_id(ADDR))) == 2, "history kept"
    running = await core.send(ADDR, "hang")
    await first(running.events(), Accepted)
    busy = await (await core.send(ADDR, "/status")).text()
    assert "State: awaiting_llm" in busy or "State: llm_requesting" in busy
    stop = await (await core.send(ADDR, "/stop")).text()
    assert stop == "Stopped the current turn. Cleared 0 queued messages."
    assert isinstance(await running.result(), Cancelled)


async def test_approval_commands(make_core: Callable[..., Any]) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider(
        [
            CallTool("write", {"text": "1"}),
            CallTool("write", {"text": "2"}),
            Reply("first done"),
            CallTool("write", {"text": "3"}),
            Reply("second done"),
        ]
    )
    settings = make_settings(autonomy_level=Autonomy.SUPERVISED)
    core: Core = make_core(provider, write, settings=settings)
    await core.start(maintenance=False)
    assert await (await core.send(ADDR, "/yes")).text() == "No approval is pending."
    handle = await core.send(ADDR, "write twice")
    events = handle.events()
    await first(events, ApprovalRequested)
    assert await (await core.send(ADDR, "/no")).text() == "Denied: write."
    await first(events, ApprovalRequested)
    assert await (await core.send(ADDR, "/always")).text() == "Approved (always): write."
    done = await first(events, TurnDone)
    assert done.text == "first done"
    assert write.calls == [{"text": "2"}]
    history = await core.history(handle.session_id)
    assert [m.is_error for m in history if m.role.value == "tool"] == [True, False]
    later = await core.send(ADDR, "write again")
    assert await later.text() == "second done", "/always holds for the session"
    assert write.calls == [{"text": "2"}, {"text": "3"}]


async def test_context_counts_the_tools_a_turn_sends(make_core: Callable[..., Any]) -> None:
    """``/context`` measures the request a turn sends: spawn_agents is one of its tools."""
    provider = ScriptedProvider([Reply("one")])
    core: Core = make_core(provider, EchoTool())
    await core.start(maintenance=False)
    await (await core.send(ADDR, "first")).text()
    sent_tools = provider.calls[-1].options.tools
    assert "spawn_agents" in [t.name for t in sent_tools]
    context = await (await core.send(ADDR, "/context")).text()
    row = next(line.split() for line in context.splitlines() if line.strip().startswith("tools"))
    assert int(row[1]) == estimate_prompt_tokens([], sent_tools)
