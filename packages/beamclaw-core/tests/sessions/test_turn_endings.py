"""Every turn ends with exactly one terminal event, whatever fails (DESIGN.md §3 inv. 5).

The store failing is a real database whose writes fail on demand
(:class:`~beamclaw_core.testing.FailingDatabase`); loop crashes come through Core's
``on_effect`` seam.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.loop import Accepted, Dropped, TurnDone, TurnError, TurnEvent
from beamclaw_core.loop import effects as fx
from beamclaw_core.messages import Message
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import (
    CallTool,
    FailingDatabase,
    Hang,
    Reply,
    ScriptedProvider,
)
from beamclaw_memory import Database, StorageUnavailableError
from beamclaw_tools import ToolRegistry

from .conftest import EchoTool, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


def crash_budget_of_one() -> CoreSettings:
    s = make_settings()
    return s.model_copy(
        update={"restart": s.restart.model_copy(update={"max_restarts": 1, "backoff_seconds": 0})}
    )


def followup() -> CoreSettings:
    s = make_settings()
    return s.model_copy(update={"queue": s.queue.model_copy(update={"mode": "followup"})})


@pytest.fixture
async def failing_db(db_url: str) -> AsyncIterator[FailingDatabase]:
    db = FailingDatabase(db_url)
    yield db
    await db.dispose()


async def test_a_disk_filling_mid_turn_ends_it_naming_the_disk(db_url: str) -> None:
    """The message was stored, then the disk filled: the turn's later writes keep
    failing and the worker gives up. The person is told what is wrong (the disk), not
    that the loop crashed; the gateway answers it 503 ``storage_unavailable``."""
    db = FailingDatabase(
        db_url, refusal=lambda url: StorageUnavailableError(url, "full", "database or disk is full")
    )
    core = Core.create(
        crash_budget_of_one(),
        db,
        provider=ScriptedProvider([Reply("lost")]),
        system_prompt="t",
        on_effect=lambda effect: fail_once_stored(db, effect),
    )
    await core.start(maintenance=False)
    try:
        handle = await core.send(ADDR, "go")
        failed = await asyncio.wait_for(handle.result(), 10)
        assert isinstance(failed, TurnError) and failed.kind == "storage_unavailable"
        assert "disk is full" in failed.message and "crash" not in failed.message
        db.failing = False
        assert (await core.history(handle.session_id))[0].text == "go"  # kept
    finally:
        await core.stop()
        await db.dispose()


def fail_once_stored(db: FailingDatabase, effect: fx.Effect) -> None:
    """Make every write fail from the moment the turn's message is stored: ``Accepted`` is
    told after that commit (which overlaps the turn's first model call)."""
    if isinstance(effect, fx.NotifyClient) and isinstance(effect.event, Accepted):
        db.failing = True


def terminal(events: list[TurnEvent], turn_id: str) -> list[TurnEvent]:
    return [e for e in events if e.terminal and e.turn_id == turn_id]


async def test_a_store_failing_in_give_up_still_ends_the_turn_with_turn_error(
    failing_db: FailingDatabase,
) -> None:
    """The store goes down mid-turn: every commit fails, the loop crashes past its restart
    budget and the give-up's own write fails too. The sender still gets ``TurnError``
    (once), and when the store is back the session answers the next message."""
    outage = {"on": True}

    def rule(_messages: list[Message], _options: CompletionOptions) -> Reply:
        return Reply("lost") if outage["on"] else Reply("back again")

    def once_stored(effect: fx.Effect) -> None:
        if outage["on"]:
            fail_once_stored(failing_db, effect)  # the turn's answer cannot be stored

    provider = ScriptedProvider([rule], repeat_last=True)
    core = Core.create(
        crash_budget_of_one(),
        failing_db,
        provider=provider,
        system_prompt="t",
        on_effect=once_stored,
    )
    await core.start(maintenance=False)
    try:
        handle = await core.send(ADDR, "go")
        everything = await core.subscribe(handle.session_id)
        failed = await asyncio.wait_for(handle.result(), 10)
        assert isinstance(failed, TurnError)
        assert failed.kind == "loop_crash"
        assert failing_db.failed_writes >= 3  # two crashed attempts and the give-up
        assert (await core.status(handle.session_id)).state == "error"

        outage["on"] = False
        failing_db.failing = False
        again = await core.send(ADDR, "still there?")
        assert await asyncio.wait_for(again.text(), 10) == "back again"
    finally:
        await core.stop()
    events = [e async for e in everything]
    assert terminal(events, handle.turn_id) == [failed]  # the old turn never ends twice
    assert [type(e) for e in terminal(events, again.turn_id)] == [TurnDone]


async def test_a_crash_after_the_ending_is_stored_still_tells_the_ending(
    make_core: Callable[..., Any],
) -> None:
    """The turn's end is committed, then the loop crashes before its terminal event went
    out (here: the effect hook raises on it). The restarted loop finds the session idle
    and has nothing to resume, so the event must have gone out on the way down, once."""
    crashes = {"left": 1}

    def crash_on_the_ending(effect: fx.Effect) -> None:
        if isinstance(effect, fx.NotifyClient) and effect.event.terminal and crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("injected crash before the ending is told")

    core: Core = make_core(ScriptedProvider([Reply("hello")]), on_effect=crash_on_the_ending)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hi")
    everything = await core.subscribe(handle.session_id)
    done = await asyncio.wait_for(handle.result(), 5)
    assert isinstance(done, TurnDone) and done.text == "hello"
    assert crashes["left"] == 0
    await core.wait_idle(handle.session_id)
    await core.stop()
    assert terminal([e async for e in everything], handle.turn_id) == [done]


@pytest.mark.parametrize("how", ["stop", "delete"])
async def test_stopping_the_session_mid_turn_ends_the_waiting_handles(
    make_core: Callable[..., Any], how: str
) -> None:
    """Stopping the runtime (or deleting the session) stops the worker mid-turn: the
    sender of the running turn and of a queued message each get one terminal event
    instead of waiting forever."""
    core: Core = make_core(ScriptedProvider([Hang()]), settings=followup())
    await core.start(maintenance=False)
    running = await core.send(ADDR, "hang")
    queued = await core.send(ADDR, "next")
    if how == "stop":
        await core.stop()
    else:
        await core.delete(running.session_id)
    for handle in (running, queued):
        ended = await asyncio.wait_for(handle.result(), 5)
        assert ended.terminal and ended.turn_id == handle.turn_id
        assert [e async for e in handle.events()][-1] == ended


async def test_a_queued_message_whose_first_commit_fails_runs_after_the_restart(
    failing_db: FailingDatabase,
) -> None:
    """The worker takes a queued message and crashes on its first commit (one failed
    write). The message is still queued in the store; the restarted worker must run it
    rather than forget it and leave its sender waiting."""
    first_done = {"seen": False}

    def fail_the_next_turns_first_commit(effect: fx.Effect) -> None:
        ending = isinstance(effect, fx.NotifyClient) and isinstance(effect.event, TurnDone)
        if ending and not first_done["seen"]:
            first_done["seen"] = True
            failing_db.fail_next = 1

    gate = asyncio.Event()
    tools = ToolRegistry()
    tools.register(EchoTool(gate=gate))  # holds the first turn while the second queues
    # the failed first commit came before the second turn's model call: the restarted
    # turn is the first to ask it
    provider = ScriptedProvider(
        [CallTool("echo", {"text": "x"}), Reply("one"), Reply("two")], repeat_last=True
    )
    core = Core.create(
        followup(),
        failing_db,
        provider=provider,
        tools=tools,
        system_prompt="t",
        on_effect=fail_the_next_turns_first_commit,
    )
    await core.start(maintenance=False)
    try:
        running = await core.send(ADDR, "first")
        queued = await core.send(ADDR, "second")
        gate.set()
        assert await asyncio.wait_for(running.text(), 5) == "one"
        assert await asyncio.wait_for(queued.text(), 5) == "two"
        assert failing_db.failed_writes == 1
        assert len(provider.calls) == 3  # the failed attempt never reached the model
    finally:
        await core.stop()


async def test_giving_up_drops_the_queued_messages_with_a_reason(
    make_core: Callable[..., Any],
) -> None:
    """After the give-up no worker runs until someone sends again: the senders of queued
    messages are told at once (``Dropped``), and the messages leave the stored queue."""
    crashing = {"on": False}

    def crash_on_llm_requests(effect: fx.Effect) -> None:
        if crashing["on"] and isinstance(effect, fx.RequestLlm):
            raise RuntimeError("injected loop crash")

    gate = asyncio.Event()
    provider = ScriptedProvider([CallTool("echo", {"text": "x"}), Reply("later")])
    settings = crash_budget_of_one().model_copy(update={"queue": followup().queue})
    core: Core = make_core(
        provider, EchoTool(gate=gate), settings=settings, on_effect=crash_on_llm_requests
    )
    await core.start(maintenance=False)
    running = await core.send(ADDR, "first")
    queued = await core.send(ADDR, "second")
    crashing["on"] = True
    gate.set()
    failed = await asyncio.wait_for(running.result(), 5)
    assert isinstance(failed, TurnError) and failed.kind == "loop_crash"
    dropped = await asyncio.wait_for(queued.result(), 5)
    assert isinstance(dropped, Dropped) and "kept crashing" in dropped.reason
    assert await core.store.pending(running.session_id) == []
    crashing["on"] = False
    assert await asyncio.wait_for((await core.send(ADDR, "again")).text(), 5) == "later"


class MisroutingRegistry(ToolRegistry):
    """A real registry whose results name another call: an impossible ``ToolComplete``."""

    async def execute(self, call: Any, session: Any, *, policy: Any = None) -> Any:
        result = await super().execute(call, session, policy=policy)
        return result.model_copy(update={"tool_call_id": "not-" + call.id})


async def test_an_impossible_transition_crashes_the_loop_and_recovery_ends_the_turn(
    db_url: str,
) -> None:
    """The executor's own event that the state cannot take (a tool result for another
    call) is an ``IllegalTransition``: it crashes the loop instead of being dropped (which
    left the turn waiting forever). The supervisor restarts the worker, recovery finds the
    tool step stored and ends the turn: the sender gets one terminal event, and the history
    says the tool was interrupted."""
    registry = MisroutingRegistry()
    registry.register(EchoTool())
    provider = ScriptedProvider([CallTool("echo", {"text": "x"}), Reply("after the restart")])
    db = Database(db_url)
    core = Core.create(make_settings(), db, provider=provider, tools=registry, system_prompt="t")
    await core.start(maintenance=False)
    try:
        handle = await core.send(ADDR, "go")
        everything = await core.subscribe(handle.session_id)
        ended = await asyncio.wait_for(handle.result(), 5)
        await core.wait_idle(handle.session_id)
        stored = await core.store.messages(handle.session_id)
    finally:
        await core.stop()
        await db.dispose()
    assert isinstance(ended, TurnDone) and ended.text == "after the restart"
    assert terminal([e async for e in everything], handle.turn_id) == [ended]
    tools = [r.message for r in stored if r.message is not None and r.message.role == "tool"]
    assert [t.content for t in tools if "interrupted" in str(t.content).lower()], stored
