"""DetachedTurn's result: every waiting caller gets it one loop pass after the turn
finished, and a caller that gives up takes nobody else's result with it."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_core.conversation.local import DetachedTurn
from beamclaw_core.sessions.fold import TurnResult

RESULT = TurnResult("s", "t", "completed", text="hello")


async def test_waiting_callers_resume_one_loop_pass_after_finish() -> None:
    turn = DetachedTurn("s", "t")
    first = asyncio.create_task(turn.result())
    second = asyncio.create_task(turn.result())
    await asyncio.sleep(0)  # both wait
    turn.finish(RESULT)
    await asyncio.sleep(0)
    assert first.done() and second.done(), "one pass, not two (no shield in between)"
    assert first.result() is RESULT and second.result() is RESULT
    assert await turn.result() is RESULT, "a later caller gets it at once"


async def test_a_cancelled_caller_leaves_the_result_to_the_others() -> None:
    turn = DetachedTurn("s", "t")
    leaving = asyncio.create_task(turn.result())
    staying = asyncio.create_task(turn.result())
    await asyncio.sleep(0)
    leaving.cancel()
    turn.finish(RESULT)  # before the cancelled caller has even resumed
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert await staying is RESULT
    gone = asyncio.create_task(turn.result())
    assert await gone is RESULT


async def test_a_caller_cancelled_before_the_end_is_forgotten() -> None:
    turn = DetachedTurn("s", "t")
    leaving = asyncio.create_task(turn.result())
    await asyncio.sleep(0)
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    turn.finish(RESULT)
    assert await turn.result() is RESULT
    assert [e async for e in turn.events()] == []
