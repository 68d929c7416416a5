"""How a turn ended, as obs events: ``turn_complete`` with duration, tokens and cost,
``turn_error`` with its kind, ``turn_cancelled``, ``turn_limit_reached``; the session's
``agent_start`` and ``session_end`` (delete, stop)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.loop import Cancelled, TurnDone, TurnError
from beamclaw_core.messages import Usage
from beamclaw_core.providers import ErrorKind
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import Fail, Hang, Reply, ScriptedProvider
from beamclaw_obs import Event, EventType
from beamclaw_obs.testing import EventRecorder, recording_events

from .conftest import VirtualTime, collect, make_settings, until

ADDR = SessionAddress("local:obs", "default", "test")


@pytest.fixture
def events() -> Iterator[EventRecorder]:
    with recording_events("turn-obs-test") as recorder:
        yield recorder


def _of(events: EventRecorder, kind: EventType, session_id: str) -> list[Event]:
    return [e for e in events.of(kind) if e.data.get("session_id") == session_id]


async def test_turn_complete_carries_duration_tokens_and_cost(
    make_core: Callable[..., Any], vt: VirtualTime, events: EventRecorder
) -> None:
    usage = Usage(prompt_tokens=40, completion_tokens=9, total_tokens=49, cost_usd=0.0125)
    provider = ScriptedProvider([Hang(), Reply("fine", usage=usage)])
    core: Core = make_core(provider, settings=make_settings(loop={"turn_timeout_seconds": 30}))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "think forever")
    await vt.until_timer(30)
    await vt.advance(30)
    await collect(handle.events())
    [limit] = _of(events, EventType.TURN_LIMIT_REACHED, handle.session_id)
    assert limit.data["limit"] == "turn_timeout"
    [cut] = _of(events, EventType.TURN_COMPLETE, handle.session_id)
    assert cut.data["total_duration_ms"] == 30_000.0  # virtual time: exactly the limit
    assert cut.data["turn_id"] == handle.turn_id

    second = await core.send(ADDR, "again")
    assert isinstance(await second.result(), TurnDone)
    done = _of(events, EventType.TURN_COMPLETE, handle.session_id)[-1]
    assert done.data["turn_id"] == second.turn_id
    assert done.data["prompt_tokens"] == 40
    assert done.data["completion_tokens"] == 9
    assert done.data["total_tokens"] == 49
    assert done.data["cost_usd"] == pytest.approx(0.0125)
    assert done.data["total_duration_ms"] == 0.0
    assert len(_of(events, EventType.AGENT_START, handle.session_id)) == 1


async def test_failed_and_cancelled_turns_say_so(
    make_core: Callable[..., Any], events: EventRecorder
) -> None:
    provider = ScriptedProvider([Fail(ErrorKind.AUTH), Hang()])
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    failed = await core.send(ADDR, "who am I")
    assert isinstance(await failed.result(), TurnError)
    [error] = _of(events, EventType.TURN_ERROR, failed.session_id)
    assert error.data["kind"] == "auth"
    assert error.data["total_duration_ms"] >= 0
    assert not _of(events, EventType.TURN_COMPLETE, failed.session_id)

    hanging = await core.send(ADDR, "wait")
    await until(lambda: provider.calls and len(provider.calls) == 2)
    await core.cancel(hanging.session_id)
    assert isinstance(await hanging.result(), Cancelled)
    [cancelled] = _of(events, EventType.TURN_CANCELLED, hanging.session_id)
    assert cancelled.data["turn_id"] == hanging.turn_id


async def test_session_end_on_delete_and_on_stop(
    make_core: Callable[..., Any], events: EventRecorder
) -> None:
    core: Core = make_core(ScriptedProvider([Reply("a"), Reply("b")]))
    await core.start(maintenance=False)
    kept = await core.send(ADDR, "hello")
    gone = await core.send(SessionAddress("local:other", "default", "test"), "hi")
    await kept.result()
    await gone.result()
    assert await core.delete(gone.session_id)
    assert [e.data["reason"] for e in _of(events, EventType.SESSION_END, gone.session_id)] == [
        "deleted"
    ]
    await core.stop()
    assert [e.data["reason"] for e in _of(events, EventType.SESSION_END, kept.session_id)] == [
        "shutdown"
    ]
