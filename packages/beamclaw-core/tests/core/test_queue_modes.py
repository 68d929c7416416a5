"""Queue modes through Core: interrupt, collect with a debounce in virtual time, queue
positions that follow the queue, a flood against the cap, a message while cancelling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import (
    Accepted,
    ApprovalRequested,
    Cancelled,
    Dropped,
    Queued,
)
from beamclaw_core.loop.history import history_problems
from beamclaw_core.messages import Message
from beamclaw_core.providers import CompletionOptions, StreamChunk
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.sessions.runs import COLLECT_HEADER
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_tools import Autonomy

from .conftest import EchoTool, VirtualTime, collect, first, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


def hang_on(text: str, reply: str) -> Any:
    """A rule: hang when the newest message is ``text`` (however often a call is cut
    short before reaching the provider), otherwise answer ``reply``."""

    def rule(messages: list[Message], _options: CompletionOptions) -> Any:
        return Hang() if messages[-1].text == text else Reply(reply)

    return rule


def users(history: list[Message]) -> list[str]:
    return [m.text for m in history if m.role.value == "user"]


async def test_interrupt_cancels_the_running_turn_and_runs_the_new_message(
    make_core: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([hang_on("first", "answer to the second")], repeat_last=True)
    core: Core = make_core(provider, settings=make_settings(queue={"mode": "interrupt"}))
    await core.start(maintenance=False)
    running = await core.send(ADDR, "first")
    await first(running.events(), Accepted)
    newer = await core.send(ADDR, "second")
    cancelled = await running.result()
    assert isinstance(cancelled, Cancelled)
    assert cancelled.reason == "Interrupted by a newer message"
    assert await newer.text() == "answer to the second"
    history = await core.history(running.session_id)
    assert history_problems(history) == []
    assert users(history) == ["first", "second"]


async def test_interrupt_mid_tool_answers_the_call(make_core: Callable[..., Any]) -> None:
    slow = EchoTool("slow", gate=asyncio.Event())
    provider = ScriptedProvider([CallTool("slow", {"text": "x"}), Reply("second done")])
    core: Core = make_core(provider, slow, settings=make_settings(queue={"mode": "interrupt"}))
    await core.start(maintenance=False)
    running = await core.send(ADDR, "first")
    await slow.started.wait()
    newer = await core.send(ADDR, "second")
    assert isinstance(await running.result(), Cancelled)
    assert await newer.text() == "second done"
    history = await core.history(running.session_id)
    assert history_problems(history) == []
    assert [m.role.value for m in history] == ["user", "assistant", "tool", "user", "assistant"]
    assert history[2].text == "Interrupted by a newer message"
    assert provider.calls[-1].messages[-1].text == "second"


async def test_collect_debounce_merges_messages_arriving_within_the_window(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider([CallTool("write", {"text": "x"}), Reply("one"), Reply("merged")])
    settings = make_settings(
        queue={"mode": "collect", "debounce_ms": 1000},
        loop={"turn_timeout_seconds": None},
        autonomy_level=Autonomy.SUPERVISED,
    )
    core: Core = make_core(provider, write, settings=settings)
    await core.start(maintenance=False)
    running = await core.send(ADDR, "m1")
    await first(running.events(), ApprovalRequested)
    m2 = await core.send(ADDR, "m2")
    m3 = await core.send(ADDR, "m3")
    assert await (await core.send(ADDR, "/yes")).text() == "Approved: write."
    assert await running.text() == "one"
    await vt.until_timer(1.0)  # the debounce window opened by m3
    await vt.advance(0.6)
    m4 = await core.send(ADDR, "m4")  # within the window: it restarts the window
    await vt.until_timer(1.0)
    await vt.advance(0.9)
    assert len(provider.calls) == 2, "still inside the window: nothing ran yet"
    await vt.advance(0.2)
    assert [await h.text() for h in (m2, m3, m4)] == ["merged"] * 3
    merged = users(await core.history(running.session_id))[-1]
    assert merged == f"{COLLECT_HEADER}\nm2\n---\nm3\n---\nm4"
    assert len(provider.calls) == 3


async def test_queue_positions_follow_the_queue(make_core: Callable[..., Any]) -> None:
    gate = asyncio.Event()
    slow = EchoTool("slow", gate=gate)
    provider = ScriptedProvider(
        [CallTool("slow", {"text": "1"}), Reply("one"), Reply("two"), Reply("three"), Reply("4")]
    )
    core: Core = make_core(provider, slow, settings=make_settings(queue={"mode": "followup"}))
    await core.start(maintenance=False)
    running = await core.send(ADDR, "m1")
    await slow.started.wait()
    handles = [await core.send(ADDR, f"m{i}") for i in (2, 3, 4)]
    gate.set()
    streams = [await collect(h.events()) for h in handles]
    positions = [[e.position for e in s if isinstance(e, Queued)] for s in streams]
    assert positions == [[1], [2, 1], [3, 2, 1]]
    for stream in streams:
        kinds = [type(e) for e in stream]
        assert kinds.index(Accepted) > max(i for i, k in enumerate(kinds) if k is Queued)
    assert await running.text() == "one"


async def test_a_flood_of_messages_is_capped_and_every_sender_told(
    make_core: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([hang_on("busy", "after the flood")], repeat_last=True)
    settings = make_settings(queue={"mode": "followup", "cap": 3})
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=False)
    running = await core.send(ADDR, "busy")
    await first(running.events(), Accepted)
    flood = [await core.send(ADDR, f"flood {i}") for i in range(10)]
    dropped = [await h.result() for h in flood[:7]]
    assert all(isinstance(d, Dropped) and "queue is full (3" in d.reason for d in dropped)
    assert (await first(flood[7].events(), Queued)).position == 3
    assert (await core.status(running.session_id)).queued == 3
    stop = await core.send(ADDR, "/stop")
    assert await stop.text() == "Stopped the current turn. Cleared 3 queued messages."
    assert isinstance(await running.result(), Cancelled)
    for handle in flood[7:]:
        assert isinstance(await handle.result(), Dropped)
    assert await (await core.send(ADDR, "still there?")).text() == "after the flood"
    history = await core.history(running.session_id)
    assert history_problems(history) == []
    assert users(history) == ["busy", "still there?"]


class SlowToStop(ScriptedProvider):
    """A provider whose stream takes until ``release`` to stop after being cancelled."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.release = asyncio.Event()
        self.streaming = asyncio.Event()
        self.stopping = asyncio.Event()

    async def stream(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> AsyncIterator[StreamChunk]:
        self.streaming.set()
        try:
            async for chunk in super().stream(messages, options):
                yield chunk
        except asyncio.CancelledError:
            self.stopping.set()
            await self.release.wait()
            raise


async def test_a_message_while_cancelling_runs_after_the_cancel(
    make_core: Callable[..., Any],
) -> None:
    provider = SlowToStop([hang_on("first", "next one")], repeat_last=True)
    core: Core = make_core(provider, settings=make_settings(queue={"mode": "followup"}))
    await core.start(maintenance=False)
    running = await core.send(ADDR, "first")
    await provider.streaming.wait()
    stop = await core.send(ADDR, "/stop")
    assert await stop.text() == "Stopped the current turn. Cleared 0 queued messages."
    await provider.stopping.wait()
    sid = running.session_id
    while (await core.status(sid)).state != "cancelling":
        await asyncio.sleep(0.005)
    during = await core.send(ADDR, "while cancelling")
    assert (await first(during.events(), Queued)).position == 1
    provider.release.set()
    assert isinstance(await running.result(), Cancelled)
    assert await during.text() == "next one"
    history = await core.history(sid)
    assert history_problems(history) == []
    assert users(history) == ["first", "while cancelling"]
