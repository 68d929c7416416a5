"""/api/approvals/always: the standing grants a WebSocket ``always`` answer made, listed
and revoked over REST; a revoked tool is asked for again."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from beamclaw_core.testing import CallTool, Reply, ScriptedProvider

from .conftest import live_gateway

TERMINAL = {"turn_done", "turn_error", "cancelled", "dropped"}
WRITE = CallTool("write_file", {"path": "note.txt", "content": "hi"})


async def until(ws: ClientConnection, *types: str) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
        frames.append(frame)
        if frame["type"] in types:
            return frames


async def write_asks(ws: ClientConnection, user: str, answer: str = "no") -> bool:
    """Send a message whose turn calls write_file; True when it asked for approval."""
    await ws.send(json.dumps({"type": "message", "text": "write", "user": user}))
    frames = await until(ws, "approval_requested", *TERMINAL)
    if frames[-1]["type"] != "approval_requested":
        return False
    approval = {
        "type": "approval",
        "session_id": frames[-1]["session_id"],
        "request_id": frames[-1]["request_id"],
        "decision": answer,
    }
    await ws.send(json.dumps(approval))
    await until(ws, *TERMINAL)
    return True


async def test_always_over_ws_then_list_and_revoke_over_rest() -> None:
    provider = ScriptedProvider([WRITE, Reply("Wrote it.")] * 6)
    async with (
        live_gateway(provider) as gw,
        websockets.connect(gw.ws_url) as ws,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        await until(ws, "authenticated")
        assert await write_asks(ws, "cy", answer="always")
        listing = (await c.get("/api/approvals/always")).json()
        [grant] = listing["grants"]
        user = grant["user_id"]
        assert not await write_asks(ws, "cy"), "the standing grant holds"
        assert await write_asks(ws, "dee"), "another person is still asked"
        by_user = (await c.get("/api/approvals/always", params={"user_id": user})).json()
        other_agent = (await c.get("/api/approvals/always", params={"agent_id": "x"})).json()
        revoked = await c.delete(f"/api/approvals/always/default/{user}/write_file")
        again = await c.delete(f"/api/approvals/always/default/{user}/write_file")
        asked_again = await write_asks(ws, "cy")
        none_left = await c.delete(f"/api/approvals/always/default/{user}")
        after = (await c.get("/api/approvals/always")).json()
    assert (grant["agent_id"], grant["tool"]) == ("default", "write_file")
    assert isinstance(grant["granted_at"], float) and grant["session_id"]
    assert by_user == listing and other_agent == {"grants": []}
    assert revoked.status_code == 200 and revoked.json() == {"revoked": 1}
    assert again.status_code == 404 and again.json()["error"]["code"] == "grant_not_found"
    assert asked_again, "revoked: asked again"
    assert none_left.json() == {"revoked": 0} and after == {"grants": []}
