"""/ws with a real ``websockets`` client against a real uvicorn server."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_gateway.settings import WebSocketSettings
from beamclaw_gateway.ws import WsConnection

from .conftest import FailingDatabases, live_gateway

TERMINAL = {"turn_done", "turn_error", "cancelled", "dropped"}


async def recv(ws: ClientConnection) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(ws.recv(), 10))


async def until(ws: ClientConnection, *types: str) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while True:
        frame = await recv(ws)
        frames.append(frame)
        if frame["type"] in types:
            return frames


async def test_message_streams_session_events_and_done() -> None:
    provider = ScriptedProvider([CallTool("think", {"thought": "hmm"}), Reply("All done.")])
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        assert await recv(ws) == {"type": "authenticated"}
        await ws.send(json.dumps({"type": "message", "id": "m1", "text": "hi", "user": "ann"}))
        frames = await until(ws, *TERMINAL)
    types = [f["type"] for f in frames]
    assert types[0] == "session"
    assert frames[0]["agent"] == "default"
    assert "accepted" in types and "tool_started" in types and "tool_finished" in types
    assert types[-1] == "turn_done"
    assert frames[-1]["text"].endswith("All done.")
    assert set(frames[-1]["usage"]) >= {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert all(f.get("session_id") == frames[0]["session_id"] for f in frames)


async def test_ping_invalid_frames_and_duplicate_ids() -> None:
    provider = ScriptedProvider([Reply("once")])
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        await recv(ws)
        await ws.send(json.dumps({"type": "ping"}))
        assert await recv(ws) == {"type": "pong"}
        await ws.send("not json")
        assert (await recv(ws))["code"] == "invalid_frame"
        await ws.send(json.dumps({"type": "dance"}))
        assert (await recv(ws))["code"] == "invalid_frame"
        message = {"type": "message", "id": "same", "text": "hello", "user": "bob"}
        await ws.send(json.dumps(message))
        await until(ws, *TERMINAL)
        await ws.send(json.dumps(message))
        duplicate = await recv(ws)
        await ws.send(json.dumps({"type": "message", "text": "x", "agent": "ghost"}))
        unknown = await recv(ws)
        await ws.send(json.dumps({"type": "subscribe", "session_id": "nope"}))
        no_session = await recv(ws)
    assert duplicate == {
        "type": "error",
        "code": "duplicate",
        "message": "message id already received",
        "id": "same",
    }
    assert unknown["code"] == "unknown_agent"
    assert no_session["code"] == "unknown_session"
    assert len(provider.calls) == 1


async def test_approval_over_ws_and_subscription_from_a_second_client() -> None:
    provider = ScriptedProvider(
        [CallTool("write_file", {"path": "note.txt", "content": "hi"}), Reply("Wrote it.")]
    )
    async with (
        live_gateway(provider) as gw,
        websockets.connect(gw.ws_url) as ws,
        websockets.connect(gw.ws_url) as watcher,
    ):
        await recv(ws)
        await recv(watcher)
        await ws.send(json.dumps({"type": "message", "id": "a", "text": "write", "user": "cy"}))
        frames = await until(ws, "approval_requested")
        session_id = frames[0]["session_id"]
        request = frames[-1]
        assert request["tool"] == "write_file"
        assert request["args"] == {"path": "note.txt", "content": "hi"}
        await watcher.send(json.dumps({"type": "subscribe", "session_id": session_id}))
        opened = await recv(watcher)
        assert opened["type"] == "subscribed" and opened["replayed"] == 0
        assert opened["seq"] == request["seq"]  # nothing published since the request
        await watcher.send(json.dumps({"type": "ping"}))
        assert (await recv(watcher))["type"] == "pong"
        await ws.send(
            json.dumps(
                {
                    "type": "approval",
                    "session_id": session_id,
                    "request_id": request["request_id"],
                    "decision": "yes",
                }
            )
        )
        rest = await until(ws, *TERMINAL)
        seen_by_watcher = await until(watcher, *TERMINAL)
        await ws.send(
            json.dumps(
                {
                    "type": "approval",
                    "session_id": session_id,
                    "request_id": "gone",
                    "decision": "no",
                }
            )
        )
        stale = await recv(ws)
    resolved = [f for f in rest if f["type"] == "approval_resolved"]
    assert resolved and resolved[0]["decision"] == "yes"
    assert rest[-1]["type"] == "turn_done" and rest[-1]["text"].endswith("Wrote it.")
    assert seen_by_watcher[-1]["type"] == "turn_done"
    assert stale["code"] == "approval_not_pending"


async def test_cancel_ends_the_running_turn() -> None:
    provider = ScriptedProvider([Hang()])
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        await recv(ws)
        await ws.send(
            json.dumps({"type": "message", "text": "wait forever", "session_id": "s-cancel"})
        )
        await until(ws, "accepted")
        await ws.send(json.dumps({"type": "cancel", "session_id": "s-cancel"}))
        frames = await until(ws, *TERMINAL)
    assert frames[-1]["type"] == "cancelled"


async def test_deliver_reaches_attached_connections() -> None:
    provider = ScriptedProvider([Reply("ok")])
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        await recv(ws)
        await ws.send(json.dumps({"type": "message", "text": "hi", "session_id": "s-deliver"}))
        await until(ws, *TERMINAL)
        async with httpx.AsyncClient(base_url=gw.base_url) as c:
            ok = await c.post(
                "/api/deliver", json={"channel": "ws", "target": "s-deliver", "message": "ping!"}
            )
            no_target = await c.post(
                "/api/deliver", json={"channel": "ws", "target": "nobody", "message": "x"}
            )
            no_channel = await c.post(
                "/api/deliver", json={"channel": "pigeon", "target": "x", "message": "x"}
            )
        notice = await recv(ws)
    assert ok.json() == {"delivered": 1}
    assert notice == {"type": "notice", "session_id": "s-deliver", "turn_id": None, "text": "ping!"}
    assert no_target.status_code == 404 and no_target.json()["error"]["code"] == "unknown_target"
    assert no_channel.status_code == 404 and no_channel.json()["error"]["code"] == "unknown_channel"


class StuckSocket:
    """A WebSocket whose peer never reads: every send blocks until the test ends."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed_with: int | None = None
        self.never = asyncio.Event()

    async def send_text(self, text: str) -> None:
        self.sent.append(text)
        if len(self.sent) == 1:
            await self.never.wait()

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed_with = code


async def test_slow_consumer_is_disconnected_without_blocking_the_producer() -> None:
    socket = StuckSocket()
    conn = WsConnection(socket, WebSocketSettings(send_buffer=8).send_buffer)  # type: ignore[arg-type]
    conn.sender = asyncio.create_task(conn.run_sender())
    results = [conn.push({"type": "text", "text": str(i)}) for i in range(20)]
    assert results.count(False) >= 1
    assert conn.closed
    for _ in range(100):
        if socket.closed_with is not None:
            break
        await asyncio.sleep(0.01)
    assert socket.closed_with == 1013
    assert json.loads(socket.sent[-1])["code"] == "slow_consumer"
    await conn.shutdown()


@pytest.mark.parametrize("user", ["local:ann", "ann"])
async def test_user_ids_keep_their_channel_prefix(user: str) -> None:
    from beamclaw_gateway.ws import ws_user_id

    assert ws_user_id(user, "local:owner") == ("local:ann" if ":" in user else "ws:ann")
    assert ws_user_id(None, "local:owner") == "local:owner"


async def test_a_disconnected_websocket_leaves_no_subscriber() -> None:
    provider = ScriptedProvider([Reply("first"), Reply("second")])
    async with live_gateway(provider) as gw:
        core = gw.runtime.core
        async with websockets.connect(gw.ws_url) as ws:
            await recv(ws)
            message = {"type": "message", "id": "m1", "text": "hi", "user": "dee"}
            await ws.send(json.dumps(message))
            frames = await until(ws, *TERMINAL)
            session_id = frames[0]["session_id"]
            await ws.send(json.dumps({"type": "subscribe", "session_id": session_id}))
            assert (await recv(ws))["type"] == "subscribed"
            assert (await core.status(session_id)).subscribers == 1
            await ws.send(json.dumps({"type": "message", "id": "m2", "text": "and", "user": "dee"}))
            await until(ws, "accepted")
        for _ in range(500):  # the handler's cleanup runs after the close handshake
            if (await core.status(session_id)).subscribers == 0:
                break
            await asyncio.sleep(0.01)
        assert (await core.status(session_id)).subscribers == 0
        await core.wait_idle(session_id)


async def test_a_reconnecting_client_gets_what_it_missed_exactly_once() -> None:
    """The first connection drops while the turn waits for an approval; a new one
    subscribes from the last number it saw, gets the missed events, answers, and follows
    the turn to its end: every event once, numbers rising, none lost."""
    provider = ScriptedProvider(
        [CallTool("write_file", {"path": "n.txt", "content": "x"}), Reply("Saved the note.")],
        chunk_size=3,
    )
    async with live_gateway(provider) as gw:
        async with websockets.connect(gw.ws_url) as first:
            await recv(first)
            await first.send(json.dumps({"type": "message", "text": "save", "user": "dee"}))
            seen = await until(first, "approval_requested")
        session_id = seen[0]["session_id"]
        accepted = next(f for f in seen if f["type"] == "accepted")
        missed = [f for f in seen if f.get("seq", 0) > accepted["seq"]]
        async with websockets.connect(gw.ws_url) as second:
            await recv(second)
            await second.send(
                json.dumps(
                    {"type": "subscribe", "session_id": session_id, "after_seq": accepted["seq"]}
                )
            )
            opened = await recv(second)
            replayed = [await recv(second) for _ in range(opened["replayed"])]
            request = replayed[-1]
            await second.send(
                json.dumps(
                    {
                        "type": "approval",
                        "session_id": session_id,
                        "request_id": request["request_id"],
                        "decision": "yes",
                    }
                )
            )
            live = await until(second, *TERMINAL)
    assert opened["type"] == "subscribed"
    assert replayed == missed and request["type"] == "approval_requested"
    seqs = [f["seq"] for f in [*replayed, *live]]
    assert seqs == sorted(set(seqs))
    assert live[-1]["type"] == "turn_done" and live[-1]["text"].endswith("Saved the note.")
    streamed = "".join(f["text"] for f in live if f["type"] == "text")
    assert streamed.endswith("Saved the note.")


async def test_subscribing_from_a_pruned_or_future_number_is_refused() -> None:
    provider = ScriptedProvider([Reply("one two three four five six")], chunk_size=1)
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        await recv(ws)
        await ws.send(json.dumps({"type": "message", "text": "go", "user": "eve"}))
        frames = await until(ws, *TERMINAL)
        session_id = frames[0]["session_id"]
        last = frames[-1]["seq"]
        await ws.send(json.dumps({"type": "subscribe", "session_id": session_id, "after_seq": 1}))
        gap = await recv(ws)
        await ws.send(
            json.dumps({"type": "subscribe", "session_id": session_id, "after_seq": last + 1})
        )
        future = await recv(ws)
        await ws.send(json.dumps({"type": "subscribe", "session_id": session_id, "after_seq": -1}))
        negative = await recv(ws)
        async with httpx.AsyncClient(base_url=gw.base_url) as http:
            detail = (await http.get(f"/api/sessions/{session_id}")).json()
        await ws.send(
            json.dumps(
                {"type": "subscribe", "session_id": session_id, "after_seq": detail["event_seq"]}
            )
        )
        caught_up = await recv(ws)
    assert detail["event_seq"] == last
    assert gap["code"] == "replay_gap" and "reload the history" in gap["message"]
    assert future["code"] == "future_seq" and future["seq"] == last
    assert negative["code"] == "invalid_frame"
    assert caught_up == {"type": "subscribed", "session_id": session_id, "seq": last, "replayed": 0}


async def test_a_database_that_cannot_be_reached_is_an_error_frame_with_retry_after() -> None:
    """The store goes away (a PostgreSQL server down) before a message is stored: the
    message's ``error`` frame says so, with ``retry_after``, like a full or locked one."""
    databases = FailingDatabases()
    provider = ScriptedProvider([Reply("never stored")], repeat_last=True)
    async with (
        live_gateway(provider, database_factory=databases.open) as gw,
        websockets.connect(gw.ws_url) as ws,
    ):
        assert await recv(ws) == {"type": "authenticated"}
        databases[0].failing = True
        await ws.send(json.dumps({"type": "message", "id": "m1", "text": "hi", "user": "ann"}))
        frames = await until(ws, "error")
        databases[0].failing = False
    error = frames[-1]
    assert error["code"] == "storage_unavailable" and error["retry_after"] == 10, error
    assert "cannot be reached" in error["message"] and error["id"] == "m1", error


def _connections_in_memory() -> int:
    return sum(type(o) is WsConnection for o in gc.get_objects())


async def test_a_closed_connection_is_freed_without_the_garbage_collector() -> None:
    """Its sender task's frames hold the connection: cancelled and gathered, the task kept
    its cancellation, and every closed connection (one per turn for the TUI on a daemon)
    waited for a collection with its queue, handles and subscriptions."""
    provider = ScriptedProvider([Reply("ok"), Reply("again")])
    async with live_gateway(provider) as gw:
        gc.collect()
        gc.disable()
        try:
            before = _connections_in_memory()
            for n in range(2):
                async with websockets.connect(gw.ws_url) as ws:
                    await recv(ws)
                    message = {"type": "message", "id": f"m{n}", "text": "hi", "user": "eve"}
                    await ws.send(json.dumps(message))
                    frames = await until(ws, *TERMINAL)
                    session = frames[0]["session_id"]
                    await ws.send(json.dumps({"type": "subscribe", "session_id": session}))
                    await until(ws, "subscribed")
            for _ in range(100):  # the handler's cleanup runs after the close handshake
                if _connections_in_memory() == before:
                    break
                await asyncio.sleep(0.05)
            assert _connections_in_memory() == before
        finally:
            gc.enable()
