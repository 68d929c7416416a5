"""One person across front ends, through the real gateway (issue 19): with ``api:ann`` and
``ws:ann`` linked to ``ann``, a message over ``/v1`` and one from a WebSocket client land
in one history; a link that would merge two histories is refused."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import websockets

from beamclaw_core.testing import Reply, ScriptedProvider

from .conftest import live_gateway

CHAT = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "over the API"}]}


async def test_the_api_and_a_websocket_of_one_person_share_a_history() -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two"), Reply("three")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        linked = [
            await c.post("/api/identities", json={"account": a, "person": "ann"})
            for a in ("api:ann", "ws:ann")
        ]
        api = await c.post("/v1/chat/completions", json=CHAT, headers={"X-User-Id": "ann"})
        async with websockets.connect(gw.ws_url) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "message", "text": "over the socket", "user": "ann"}))
            frames: list[dict[str, Any]] = []
            while not frames or frames[-1]["type"] != "turn_done":
                frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        session_id = frames[0]["session_id"]
        detail = (await c.get(f"/api/sessions/{session_id}")).json()
        await c.post("/v1/chat/completions", json=CHAT, headers={"X-User-Id": "bo"})
        conflict = await c.post("/api/identities", json={"account": "api:bo", "person": "ann"})
        listing = (await c.get("/api/identities")).json()
        unlinked = await c.delete("/api/identities/ws:ann")
        again = await c.delete("/api/identities/ws:ann")
    assert [r.status_code for r in linked] == [200, 200]
    assert api.status_code == 200
    assert [m["content"] for m in detail["messages"]] == [
        "over the API",
        "one",
        "over the socket",
        "two",
    ]
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "identity_conflict"
    assert [(x["account"], x["person"]) for x in listing["links"]] == [
        ("api:ann", "ann"),
        ("ws:ann", "ann"),
    ]
    assert unlinked.status_code == 200 and unlinked.json()["person"] == "ann"
    assert again.status_code == 404 and again.json()["error"]["code"] == "account_not_linked"


async def test_without_a_user_the_api_the_socket_and_the_tui_are_the_owner() -> None:
    """A personal gateway's own person needs no links: a /v1 request and a /ws message
    that name no user speak as the TUI on this machine does (``local:<login>``), so the
    three share one history (``session_sharing = "shared"``)."""
    from beamclaw_core.conversation import TurnRequest
    from beamclaw_core.sessions import SessionAddress
    from beamclaw_core.store.ids import local_user_id

    provider = ScriptedProvider([Reply("one"), Reply("two"), Reply("three")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        api = await c.post("/v1/chat/completions", json=CHAT)
        async with websockets.connect(gw.ws_url) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "message", "text": "over the socket"}))
            frames: list[dict[str, Any]] = []
            while not frames or frames[-1]["type"] != "turn_done":
                frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        conversation = gw.app.state.services.conversation
        tui = TurnRequest(SessionAddress(local_user_id(), "default", "tui"), "from the TUI")
        await (await conversation.send(tui)).result()
        session_id = conversation.session_id(tui)
        detail = (await c.get(f"/api/sessions/{session_id}")).json()
    assert api.headers["x-session-id"] == frames[0]["session_id"] == session_id
    assert [m["content"] for m in detail["messages"]] == [
        "over the API",
        "one",
        "over the socket",
        "two",
        "from the TUI",
        "three",
    ]
