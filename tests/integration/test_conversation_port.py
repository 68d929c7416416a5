"""The Conversation port, one contract for both implementations: the gateway's own
``LocalConversation`` and the CLI's ``RemoteConversation`` reaching the same gateway over
REST and ``/ws``. Each scenario runs against both; they must not be told apart."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from beamclaw_cli.remote import RemoteConversation
from beamclaw_core.conversation import Conversation, TurnRequest
from beamclaw_core.loop import ApprovalRequested, TextChunk, TurnDone, TurnEvent
from beamclaw_core.sessions import (
    FutureSequenceError,
    SessionAddress,
    UnknownSessionError,
)
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider, ScriptStep
from beamclaw_gateway.testing import live_gateway

WRITE = CallTool("write_file", {"path": "note.txt", "content": "hi"})
ANN = SessionAddress("local:ann", "default", "test")

Opened = Callable[[list[ScriptStep]], "AsyncIterator[Conversation]"]


@asynccontextmanager
async def _local(script: list[ScriptStep]) -> AsyncIterator[Conversation]:
    async with live_gateway(ScriptedProvider(script)) as gw:
        yield gw.app.state.services.conversation


@asynccontextmanager
async def _remote(script: list[ScriptStep]) -> AsyncIterator[Conversation]:
    async with live_gateway(ScriptedProvider(script)) as gw:
        remote = RemoteConversation(gw.base_url, token=None)
        try:
            yield remote
        finally:
            await remote.aclose()


@pytest.fixture(params=["local", "remote"])
def opened(request: pytest.FixtureRequest) -> Callable[..., object]:
    return _local if request.param == "local" else _remote


async def _events(turn_events: AsyncIterator[TurnEvent]) -> list[TurnEvent]:
    return [e async for e in turn_events]


async def test_send_streams_the_turn_and_pages_its_history(opened: Callable[..., object]) -> None:
    async with opened([Reply("Hello Ann."), Reply("Again.")]) as conv:  # type: ignore[attr-defined]
        assert isinstance(conv, Conversation)
        turn = await conv.send(TurnRequest(ANN, "hi", approval_mode="wait"))
        events = await _events(turn.events())
        assert isinstance(events[-1], TurnDone)
        assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello Ann."
        result = await turn.result()
        assert (result.status, result.text, result.session_id) == (
            "completed",
            "Hello Ann.",
            turn.session_id,
        )
        await (await conv.send(TurnRequest(ANN, "more"))).result()

        page = await conv.history(turn.session_id, limit=1)
        assert [e.message.text for e in page.entries] == ["Again."]
        assert (page.has_more, page.total) == (True, 4)
        older = await conv.history(turn.session_id, limit=10, before_seq=page.entries[0].seq)
        assert [e.message.role.value for e in older.entries] == ["user", "assistant", "user"]
        assert not older.has_more
        info = await conv.info(turn.session_id)
        assert (info.agent_id, info.channel) == ("default", "test")
        assert [s.session_id for s in await conv.sessions(agent="default")] == [turn.session_id]
        assert await conv.sessions(agent="nobody") == []

        # a client that saw events up to the first turn's end gets the rest, once
        stream = await conv.subscribe(turn.session_id, after_seq=events[-1].seq)
        replayed = [e async for e in _take(stream, stream.replayed)]
        stream.close()
        assert stream.replayed == len(replayed) > 0
        assert all(e.seq > events[-1].seq for e in replayed)
        assert isinstance(replayed[-1], TurnDone)
        assert replayed[-1].text == "Again."


async def _take(stream: AsyncIterator[TurnEvent] | object, n: int) -> AsyncIterator[TurnEvent]:
    got = 0
    async for event in stream:  # type: ignore[attr-defined]
        yield event
        got += 1
        if got >= n:
            return


async def test_bad_ids_are_told_apart(opened: Callable[..., object]) -> None:
    async with opened([Reply("ok")]) as conv:  # type: ignore[attr-defined]
        with pytest.raises(UnknownSessionError):
            await conv.subscribe("no-such-session")
        with pytest.raises(UnknownSessionError):
            await conv.history("no-such-session")
        with pytest.raises(UnknownSessionError):
            await conv.info("no-such-session")
        turn = await conv.send(TurnRequest(ANN, "hi"))
        await turn.result()
        with pytest.raises(FutureSequenceError):
            await conv.subscribe(turn.session_id, after_seq=10**18)
        assert await conv.answer("no-such-approval", "yes") == "unknown"


async def test_an_approval_waits_and_is_answered_once(opened: Callable[..., object]) -> None:
    async with opened([WRITE, Reply("Wrote it.")]) as conv:  # type: ignore[attr-defined]
        turn = await conv.send(TurnRequest(ANN, "write it", approval_mode="wait"))
        asked: ApprovalRequested | None = None
        async for event in turn.events():
            if isinstance(event, ApprovalRequested):
                asked = event
                break
        assert asked is not None
        (pending,) = await conv.pending_approvals(turn.session_id)
        assert (pending.request_id, pending.tool) == (asked.request_id, "write_file")
        assert await conv.answer(asked.request_id, "yes") == "answered"
        assert await conv.answer(asked.request_id, "no") == "already_answered"
        result = await turn.result()
        assert (result.status, result.text) == ("completed", "Wrote it.")
        assert await conv.pending_approvals() == []
        assert await conv.stop(turn.session_id) == 0
        await conv.new(turn.session_id)
        assert (await conv.history(turn.session_id, limit=None)).total == 4, (
            "/new keeps the stored history"
        )


async def test_deny_mode_answers_for_a_client_that_cannot(opened: Callable[..., object]) -> None:
    async with opened([WRITE, Reply("Not written.")]) as conv:  # type: ignore[attr-defined]
        turn = await conv.send(TurnRequest(ANN, "write it", approval_mode="deny"))
        result = await turn.result()
        assert (result.status, result.text) == ("completed", "Not written.")
        page = await conv.history(turn.session_id, limit=None)
        tool = next(e.message for e in page.entries if e.message.role.value == "tool")
        assert "Denied" in tool.text
