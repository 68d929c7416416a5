"""Lane behaviour through Core: approvals, queue modes, /stop, limits, crashes."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from contextlib import closing
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.loop import (
    Accepted,
    ApprovalRequested,
    ApprovalResolved,
    Cancelled,
    Dropped,
    LimitReached,
    Queued,
    TurnDone,
    TurnError,
)
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.history import history_problems
from beamclaw_core.messages import Message
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.sessions import SessionAddress, TurnNotStartedError
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_memory import Database
from beamclaw_tools import Autonomy, ToolRegistry

from .conftest import EchoTool, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


def with_autonomy(autonomy: Autonomy, **kw: Any) -> CoreSettings:
    s = make_settings(**kw)
    return s.model_copy(update={"autonomy_level": autonomy})


def with_queue(mode: str, **loop: Any) -> CoreSettings:
    s = make_settings(**loop)
    return s.model_copy(update={"queue": s.queue.model_copy(update={"mode": mode})})


async def next_of(handle: Any, kind: type) -> Any:
    async for event in handle.events():
        if isinstance(event, kind):
            return event
    raise AssertionError(f"no {kind.__name__}")


@pytest.mark.parametrize(
    ("autonomy", "answer", "ran", "decision"),
    [
        (Autonomy.FULL, None, True, None),
        (Autonomy.READ_ONLY, None, False, "policy"),
        (Autonomy.SUPERVISED, "/yes", True, "yes"),
        (Autonomy.SUPERVISED, "/no", False, "no"),
        (Autonomy.SUPERVISED, "/always", True, "always"),
    ],
)
async def test_approvals_in_every_autonomy_level(
    make_core: Callable[..., Any],
    autonomy: Autonomy,
    answer: str | None,
    ran: bool,
    decision: str | None,
) -> None:
    write = EchoTool("write", approval=True, min_autonomy=Autonomy.READ_ONLY)
    provider = ScriptedProvider([CallTool("write", {"text": "x"}), Reply("finished")])
    core: Core = make_core(provider, write, settings=with_autonomy(autonomy))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "please write")
    if answer is not None:
        request = await next_of(handle, ApprovalRequested)
        assert request.tool == "write"
        reply = await core.send(ADDR, answer)
        assert isinstance(await reply.result(), TurnDone)
    done = await handle.result()
    assert isinstance(done, TurnDone)
    assert done.text == "finished"
    assert bool(write.calls) is ran
    history = await core.history(handle.session_id)
    tool_msg = next(m for m in history if m.role.value == "tool")
    assert tool_msg.is_error is (not ran)
    assert history_problems(history) == []
    if decision == "always":
        status = await core.send(ADDR, "/status")
        assert "write" in (await status.text())


async def test_approval_timeout_denies(make_core: Callable[..., Any]) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider([CallTool("write", {"text": "x"}), Reply("ok")])
    core: Core = make_core(
        provider, write, settings=with_autonomy(Autonomy.SUPERVISED, approval_timeout_seconds=0.05)
    )
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    resolved = await next_of(handle, ApprovalResolved)
    assert resolved.decision == "timeout"
    assert (await handle.text()) == "ok"
    assert write.calls == []


async def test_api_answer_approval(make_core: Callable[..., Any]) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider([CallTool("write", {"text": "x"}), Reply("ok")])
    core: Core = make_core(provider, write, settings=with_autonomy(Autonomy.SUPERVISED))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    request = await next_of(handle, ApprovalRequested)
    assert not await core.answer_approval(handle.session_id, "bogus", "yes")
    assert await core.answer_approval(handle.session_id, request.request_id, "yes")
    assert (await handle.text()) == "ok"
    assert write.calls == [{"text": "x"}]


async def test_followup_queue_is_fifo(make_core: Callable[..., Any]) -> None:
    slow = EchoTool("slow", delay=0.2)
    provider = ScriptedProvider(
        [CallTool("slow", {"text": "1"}), Reply("one"), Reply("two"), Reply("three")]
    )
    core: Core = make_core(provider, slow, settings=with_queue("followup"))
    await core.start(maintenance=False)
    first = await core.send(ADDR, "m1")
    await slow.started.wait()
    second = await core.send(ADDR, "m2")
    third = await core.send(ADDR, "m3")
    assert (await next_of(second, Queued)).position == 1
    assert (await next_of(third, Queued)).position == 2
    assert [await h.text() for h in (first, second, third)] == ["one", "two", "three"]
    users = [m.text for m in await core.history(first.session_id) if m.role.value == "user"]
    assert users == ["m1", "m2", "m3"]


async def test_collect_queue_merges_into_one_turn(make_core: Callable[..., Any]) -> None:
    slow = EchoTool("slow", delay=0.2)
    provider = ScriptedProvider([CallTool("slow", {"text": "1"}), Reply("one"), Reply("both")])
    core: Core = make_core(provider, slow, settings=with_queue("collect"))
    await core.start(maintenance=False)
    first = await core.send(ADDR, "m1")
    await slow.started.wait()
    second = await core.send(ADDR, "m2")
    third = await core.send(ADDR, "m3")
    assert await first.text() == "one"
    assert await second.text() == "both"
    assert await third.text() == "both"
    users = [m.text for m in await core.history(first.session_id) if m.role.value == "user"]
    assert len(users) == 2
    assert "m2\n---\nm3" in users[1]


async def test_collect_never_merges_a_scheduled_run(make_core: Callable[..., Any]) -> None:
    slow = EchoTool("slow", delay=0.2)
    provider = ScriptedProvider(
        [CallTool("slow", {"text": "1"}), Reply("one"), Reply("job"), Reply("people")]
    )
    core: Core = make_core(provider, slow, settings=with_queue("collect"))
    await core.start(maintenance=False)
    first = await core.send(ADDR, "m1")
    await slow.started.wait()
    job = await core.send(ADDR, "scheduled prompt", scheduled=True)
    second = await core.send(ADDR, "m2")
    third = await core.send(ADDR, "m3")
    assert await first.text() == "one"
    assert await job.text() == "job", "the scheduled run is a turn of its own, first in line"
    assert await second.text() == "people" and await third.text() == "people"
    users = [m.text for m in await core.history(first.session_id) if m.role.value == "user"]
    assert users[1] == "scheduled prompt"
    assert "m2\n---\nm3" in users[2]


async def test_queue_cap_drops_oldest_and_tells_sender(make_core: Callable[..., Any]) -> None:
    settings = with_queue("followup")
    settings = settings.model_copy(update={"queue": settings.queue.model_copy(update={"cap": 1})})
    provider = ScriptedProvider([Hang(), Reply("late")], repeat_last=True)
    core: Core = make_core(provider, settings=settings)
    await core.start(maintenance=False)
    running = await core.send(ADDR, "busy")
    await next_of(running, Accepted)
    older = await core.send(ADDR, "older")
    newer = await core.send(ADDR, "newer")
    dropped = await older.result()
    assert isinstance(dropped, Dropped)
    assert "queue is full" in dropped.reason
    stop = await core.send(ADDR, "/stop")
    assert "Cleared 1 queued message" in await stop.text()
    assert isinstance(await running.result(), Cancelled)
    assert isinstance(await newer.result(), Dropped)
    assert history_problems(await core.history(running.session_id)) == []


async def test_stop_mid_tool_answers_every_call(make_core: Callable[..., Any]) -> None:
    slow = EchoTool("slow", delay=30)
    provider = ScriptedProvider([CallTool("slow", {"text": "1"}), Reply("after")])
    core: Core = make_core(provider, slow)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    await slow.started.wait()
    assert await core.cancel(handle.session_id) == 0
    assert isinstance(await handle.result(), Cancelled)
    history = await core.history(handle.session_id)
    assert history[-1].text == "Cancelled by user"
    assert history_problems(history) == []


async def test_tool_iteration_limit_tells_the_user(make_core: Callable[..., Any]) -> None:
    echo = EchoTool()
    provider = ScriptedProvider([CallTool("echo", {"text": "again"})], repeat_last=True)
    core: Core = make_core(provider, echo, settings=make_settings(max_tool_iterations=2))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "loop forever")
    limit = await next_of(handle, LimitReached)
    assert limit.limit == "max_tool_iterations"
    done = await handle.result()
    assert isinstance(done, TurnDone)
    assert "limit of 2 tool iterations" in done.text
    assert len(echo.calls) == 2
    assert history_problems(await core.history(handle.session_id)) == []


async def test_loop_crash_mid_tool_restarts_with_history(make_core: Callable[..., Any]) -> None:
    echo = EchoTool()
    crashes = {"left": 1}

    def crash_once(effect: fx.Effect) -> None:
        if isinstance(effect, fx.ExecuteTool) and crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("injected loop crash")

    provider = ScriptedProvider([CallTool("echo", {"text": "1"}), Reply("recovered")])
    core: Core = make_core(provider, echo, on_effect=crash_once)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    assert await handle.text() == "recovered"
    history = await core.history(handle.session_id)
    assert history_problems(history) == []
    tool = next(m for m in history if m.role.value == "tool")
    assert "Interrupted" in tool.text


async def test_restart_budget_exhausted_goes_to_error(make_core: Callable[..., Any]) -> None:
    def always_crash(effect: fx.Effect) -> None:
        if isinstance(effect, fx.RequestLlm):
            raise RuntimeError("broken")

    settings = make_settings()
    settings = settings.model_copy(
        update={
            "restart": settings.restart.model_copy(
                update={"max_restarts": 1, "backoff_seconds": 0.0}
            )
        }
    )
    provider = ScriptedProvider([Reply("never"), Reply("works now")])
    core: Core = make_core(provider, settings=settings, on_effect=always_crash)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    failed = await handle.result()
    assert isinstance(failed, TurnError)
    assert failed.kind == "loop_crash"
    assert (await core.status(handle.session_id)).state == "error"


async def test_one_failing_session_does_not_stall_another(make_core: Callable[..., Any]) -> None:
    provider = ScriptedProvider(
        [lambda msgs, _o: Hang() if msgs[-1].text == "hang" else Reply("fine")], repeat_last=True
    )
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    stuck = await core.send(SessionAddress("local:a", "default"), "hang")
    ok = await core.send(SessionAddress("local:b", "default"), "hello")
    assert await asyncio.wait_for(ok.text(), 10) == "fine"
    await core.cancel(stuck.session_id)
    assert isinstance(await stuck.result(), Cancelled)


async def test_a_message_to_an_idle_session_is_stored_when_send_returns(
    make_core: Callable[..., Any],
) -> None:
    # handed straight to the idle worker: its turn's first commit is what send waits for
    core: Core = make_core(ScriptedProvider([Hang()]))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hello")
    assert [m.text for m in await core.history(handle.session_id)] == ["hello"]
    assert (await core.status(handle.session_id)).queued == 0
    await core.cancel(handle.session_id)
    assert isinstance(await handle.result(), Cancelled)


async def test_the_model_is_never_asked_a_question_that_is_not_stored(
    make_core: Callable[..., Any], db_url: str
) -> None:
    # a kill -9 may land at any moment once a request has left: every question the model
    # is asked must be committed by then, as another connection to the store sees it
    # (handed to an idle worker, queued behind a turn, and the run a turn consumes)
    path = db_url.removeprefix("sqlite:///")
    unstored: list[str] = []

    def rule(messages: list[Message], _options: CompletionOptions) -> Reply:
        question = messages[-1].text
        with closing(sqlite3.connect(path)) as conn:
            rows = conn.execute("SELECT content FROM messages WHERE role = 'user'").fetchall()
        if not any(question in str(content) for (content,) in rows):
            unstored.append(question)
        return Reply(f"re: {question}")

    core: Core = make_core(
        ScriptedProvider([rule], repeat_last=True), settings=with_queue("followup")
    )
    await core.start(maintenance=False)
    handles = [await core.send(ADDR, f"question {i}") for i in range(4)]
    answers = [await asyncio.wait_for(h.text(), 10) for h in handles]
    assert answers == [f"re: question {i}" for i in range(4)]
    assert unstored == []


async def test_a_message_that_cannot_be_stored_fails_its_send(
    make_core: Callable[..., Any],
) -> None:
    # the turn's first commit fails: nothing is stored, the model is not asked, and the
    # sender is told at once
    provider = ScriptedProvider([Reply("fine")], repeat_last=True)
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    with pytest.raises(Exception) as failed:
        await asyncio.wait_for(core.send(ADDR, "a lone surrogate \ud800"), 10)
    assert provider.calls == []  # the model was not asked
    assert not isinstance(failed.value, TimeoutError)  # answered, not left hanging
    handle = await core.send(ADDR, "good")
    assert await asyncio.wait_for(handle.text(), 10) == "fine"
    assert [m.text for m in await core.history(handle.session_id)] == ["good", "fine"]


async def test_a_message_handed_to_an_idle_session_can_still_be_dropped(
    make_core: Callable[..., Any],
) -> None:
    settings = with_queue("followup")
    settings = settings.model_copy(update={"queue": settings.queue.model_copy(update={"cap": 1})})
    core: Core = make_core(ScriptedProvider([Reply("second")]), settings=settings)
    await core.start(maintenance=False)
    first, second = await asyncio.wait_for(
        asyncio.gather(core.send(ADDR, "one"), core.send(ADDR, "two")), 10
    )
    assert isinstance(await first.result(), Dropped)
    assert await second.text() == "second"
    assert [m.text for m in await core.history(second.session_id)] == ["two", "second"]


async def test_approval_rules_follow_tools_replaced_between_turns(db_url: str) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool("write"))
    script = [CallTool("write", {"text": "1"}), Reply("first"), CallTool("write", {"text": "2"})]
    provider = ScriptedProvider([*script, Reply("second")])
    db = Database(db_url)
    settings = with_autonomy(Autonomy.SUPERVISED)
    core = Core.create(settings, db, provider=provider, tools=registry, system_prompt="test")
    await core.start(maintenance=False)
    try:
        assert await (await core.send(ADDR, "go")).text() == "first"
        registry.register(EchoTool("write", approval=True), replace=True)
        handle = await core.send(ADDR, "again")
        assert (await next_of(handle, ApprovalRequested)).tool == "write"
        await core.send(ADDR, "/no")
        assert await handle.text() == "second"
    finally:
        await core.stop()
        await db.dispose()


async def test_a_handed_over_message_is_answered_when_the_core_stops_first(
    make_core: Callable[..., Any],
) -> None:
    core: Core = make_core(ScriptedProvider([Reply("never")]))
    await core.start(maintenance=False)
    send = asyncio.create_task(core.send(ADDR, "hello"))
    await asyncio.sleep(0)  # the send waits for a worker that has not run yet
    await core.stop()
    with pytest.raises(TurnNotStartedError):
        await asyncio.wait_for(send, 10)


async def test_a_new_sessions_one_step_turn_is_three_transactions(
    make_core: Callable[..., Any],
) -> None:
    # docs/architecture.md: the session, its message with the new state, the answer
    core: Core = make_core(ScriptedProvider([Reply("hi"), Reply("again")]))
    await core.start(maintenance=False)
    db = core.store.db
    before = db.committed_writes
    handle = await core.send(ADDR, "hello")
    assert await asyncio.wait_for(handle.text(), 10) == "hi"  # told after its commit
    assert db.committed_writes - before == 3
    before = db.committed_writes
    assert await asyncio.wait_for((await core.send(ADDR, "more")).text(), 10) == "again"
    assert db.committed_writes - before == 2  # a known session: message, answer


@pytest.mark.parametrize("drafts", [False, True])
async def test_a_turns_llm_request_is_out_before_its_sender_is_answered(
    make_core: Callable[..., Any], drafts: bool
) -> None:
    # the sender's own work after send (an HTTP handler's) overlaps the LLM call's wait
    provider = ScriptedProvider([Hang()])
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hello", drafts=drafts)
    assert len(provider.calls) == 1
    await core.cancel(handle.session_id)
    assert isinstance(await handle.result(), Cancelled)


async def test_a_turns_first_commit_precedes_its_first_model_call(
    make_core: Callable[..., Any],
) -> None:
    # the message is stored before the request leaves (a kill -9 once the model has it
    # keeps it), in one transaction with the turn's state; its sender is told then
    seen: list[int] = []
    dbs: list[Database] = []

    def rule(_messages: list[Message], _options: CompletionOptions) -> Reply:
        seen.append(dbs[0].committed_writes)
        return Reply("ok")

    core: Core = make_core(ScriptedProvider([Reply("warm"), rule]))
    dbs.append(core.store.db)
    await core.start(maintenance=False)
    first = await core.send(ADDR, "warm up")  # the session exists: one write per commit
    await asyncio.wait_for(first.result(), 10)
    before = dbs[0].committed_writes
    handle = await core.send(ADDR, "hello")
    assert dbs[0].committed_writes == before + 1, "accepted once stored"
    assert await asyncio.wait_for(handle.text(), 10) == "ok"
    assert seen == [before + 1], "the model was asked before the message's commit"
    history = await core.history(handle.session_id)
    assert [m.text for m in history][-2:] == ["hello", "ok"]
