"""``/new`` always starts a fresh session: its memory flush is best effort, bounded by
``memory_flush_timeout_seconds``, reported when it fails, and sees what a turn sees."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.compaction import FLUSH_INSTRUCTIONS
from beamclaw_core.loop.request import SUMMARY_PREFIX
from beamclaw_core.providers import ErrorKind
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Fail, Hang, Reply, ScriptedProvider
from beamclaw_obs import EventType
from beamclaw_obs.testing import EventRecorder, recording_events

from .conftest import EchoTool, VirtualTime, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


@pytest.fixture
def events() -> Iterator[EventRecorder]:
    with recording_events("new-command-recorder") as recorder:
        yield recorder


def flushes(events: EventRecorder) -> list[dict[str, Any]]:
    """The MEMORY_FLUSH events' outcome fields."""
    keep = ("ok", "tool_calls", "error")
    return [
        {k: v for k, v in e.data.items() if k in keep} for e in events.of(EventType.MEMORY_FLUSH)
    ]


async def test_the_flush_request_is_built_like_a_turn_request_with_the_summary(
    make_core: Callable[..., Any], events: EventRecorder
) -> None:
    provider = ScriptedProvider(
        [
            Reply("first answer " * 20),
            Fail(ErrorKind.CONTEXT_OVERFLOW, "too long"),
            Reply("NO_REPLY"),  # the flush before the overflow compaction
            Reply("fits"),
            CallTool("memory_store", {"text": "ann asked twice"}),  # the /new flush
            Reply("NO_REPLY"),
        ]
    )
    summariser = ScriptedProvider([Reply("they talked about the first question")])
    memory = EchoTool("memory_store")
    core: Core = make_core(provider, memory, compaction_provider=summariser)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "first question " * 20)).text()
    assert await (await core.send(ADDR, "second question")).text() == "fits"
    turn_request = provider.calls[3].messages

    assert await (await core.send(ADDR, "/new")).text() == "Started a fresh session."
    flush_request = provider.calls[4].messages
    assert flush_request[-1].text == FLUSH_INSTRUCTIONS
    assert flush_request[:-2] == turn_request  # the turn's request, then its answer
    summaries = [m for m in flush_request if m.text.startswith(SUMMARY_PREFIX)]
    assert [m.text for m in summaries] == [SUMMARY_PREFIX + "they talked about the first question"]
    assert flush_request[-3].text == "second question" and flush_request[-2].text == "fits"
    assert memory.calls == [{"text": "ann asked twice"}]
    assert flushes(events)[-1] == {"ok": True, "tool_calls": 1}


async def test_new_with_the_provider_down_still_starts_fresh_and_says_the_flush_failed(
    make_core: Callable[..., Any], events: EventRecorder
) -> None:
    provider = ScriptedProvider([Reply("noted"), Fail(ErrorKind.AUTH, "bad key"), Reply("hi!")])
    core: Core = make_core(provider, EchoTool("memory_store"))
    await core.start(maintenance=False)
    await (await core.send(ADDR, "I like tea")).text()
    answer = await (await core.send(ADDR, "/new")).text()
    assert answer.startswith("Started a fresh session.")
    assert "memory flush failed" in answer and "may not have been saved" in answer
    [flush] = flushes(events)
    assert flush["ok"] is False and "bad key" in flush["error"]
    assert await (await core.send(ADDR, "hello")).text() == "hi!"
    assert [m.text for m in provider.calls[-1].messages if m.role.value != "system"] == ["hello"]


async def test_new_with_the_provider_hanging_is_bounded_by_the_flush_timeout(
    make_core: Callable[..., Any], events: EventRecorder, vt: VirtualTime
) -> None:
    settings = make_settings(loop={"memory_flush_timeout_seconds": 30.0})
    provider = ScriptedProvider([Reply("noted"), Hang()])
    core: Core = make_core(provider, EchoTool("memory_store"), settings=settings)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "I like tea")).text()
    new = asyncio.ensure_future(core.send(ADDR, "/new"))
    await asyncio.wait_for(vt.until_timer(30), 5)  # the flush waits on its time limit
    await vt.advance(29)
    assert not new.done()
    await vt.advance(1)
    answer = await (await asyncio.wait_for(new, 5)).text()
    assert answer.startswith("Started a fresh session.")
    assert "timed out after 30 s" in answer
    [flush] = flushes(events)
    assert flush["ok"] is False and "timed out" in flush["error"]
    assert (await core.status(core.session_id(ADDR))).state == "idle"
