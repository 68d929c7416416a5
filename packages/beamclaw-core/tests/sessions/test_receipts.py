"""Receipts of runs handed to an idle worker: each settles once, an acceptance reaches
its sender a loop round later, a stopped worker is ``TurnNotStartedError`` to senders."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_core.sessions import TurnNotStartedError
from beamclaw_core.sessions.receipts import Receipts
from beamclaw_core.sessions.runs import PendingRun


def run(run_id: str) -> PendingRun:
    return PendingRun(run_id, "hello", 0.0, persisted=False)


async def test_an_acceptance_reaches_the_sender_on_the_next_round() -> None:
    receipts = Receipts("s1")
    waiting = receipts.issue("a")
    receipts.accept([run("a")])
    assert not waiting.done(), "the worker goes on first (its LLM request leaves)"
    assert not receipts.outstanding([run("a")])
    await asyncio.sleep(0)
    assert waiting.done() and waiting.result() is None


async def test_a_receipt_settles_once() -> None:
    receipts = Receipts("s1")
    waiting = receipts.issue("a")
    receipts.fail([run("a")], RuntimeError("store down"))
    receipts.accept([run("a")])
    with pytest.raises(RuntimeError, match="store down"):
        await waiting


async def test_a_stopped_worker_is_turn_not_started_to_the_sender() -> None:
    receipts = Receipts("s1")
    waiting = receipts.issue("a")
    receipts.fail([run("a")], asyncio.CancelledError())
    with pytest.raises(TurnNotStartedError):
        await waiting


async def test_a_sender_that_went_away_is_skipped() -> None:
    receipts = Receipts("s1")
    gone = receipts.issue("a")
    gone.cancel()
    receipts.fail([run("a"), run("never-issued")], RuntimeError("x"))
    receipts.accept([run("a")])
    await asyncio.sleep(0)
    assert gone.cancelled()
