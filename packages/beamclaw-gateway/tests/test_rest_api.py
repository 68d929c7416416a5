"""/api: sessions, stop, status; /health components."""

from __future__ import annotations

import asyncio

import httpx

from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider

from .conftest import live_gateway

CHAT = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "note this"}]}


async def test_session_detail_uses_openai_message_shape() -> None:
    provider = ScriptedProvider([CallTool("think", {"thought": "t"}, id="call_1"), Reply("Done.")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        await c.post("/v1/chat/completions", json=CHAT, headers={"X-Session-Id": "s1"})
        listing = (await c.get("/api/sessions")).json()
        detail = (await c.get("/api/sessions/s1")).json()
        missing = await c.get("/api/sessions/nope")
    assert [s["session_id"] for s in listing["sessions"]] == ["s1"]
    assert detail["session"]["agent_id"] == "default"
    assert detail["session"]["state"] == "idle"
    messages = detail["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    seqs = [m["seq"] for m in messages]
    assert seqs == sorted(seqs)
    call = messages[1]["tool_calls"][0]
    assert call["id"] == "call_1"
    assert call["type"] == "function"
    assert call["function"]["name"] == "think"
    assert call["function"]["arguments"] == '{"thought": "t"}'
    assert messages[2]["tool_call_id"] == "call_1"
    assert messages[3]["content"] == "Done."
    assert messages[3]["usage"]["total_tokens"] >= 0
    assert all(isinstance(m["created_at"], float) for m in messages)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "session_not_found"


async def test_reset_delete_stop_and_status() -> None:
    provider = ScriptedProvider([Reply("one"), Hang()])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        await c.post("/v1/chat/completions", json=CHAT, headers={"X-Session-Id": "s2"})
        reset = await c.post("/api/sessions/s2/reset")
        # a hanging turn, stopped through the API
        pending = asyncio.create_task(
            c.post("/v1/chat/completions", json=CHAT, headers={"X-Session-Id": "s3"})
        )
        for _ in range(200):
            if len(provider.calls) == 2:
                break
            await asyncio.sleep(0.01)
        status = (await c.get("/api/status")).json()
        stopped = await c.post("/api/stop", json={"session_id": "s3"})
        cancelled = await pending
        deleted = await c.delete("/api/sessions/s2")
        deleted_again = await c.delete("/api/sessions/s2")
        stop_missing = await c.post("/api/stop", json={"session_id": "ghost"})
        reset_missing = await c.post("/api/sessions/ghost/reset")
        health = (await c.get("/health")).json()
    assert reset.json() == {"ok": True}
    assert status["sessions"] == 2 and status["busy_sessions"] == 1
    assert status["channels"] == ["webhook", "ws"] and status["agents"] == ["default"]
    assert stopped.json() == {"session_id": "s3", "cleared": 0}
    assert cancelled.status_code == 409
    assert cancelled.json()["error"]["code"] == "turn_cancelled"
    assert deleted.json() == {"ok": True}
    assert deleted_again.status_code == 404
    assert stop_missing.status_code == 404 and reset_missing.status_code == 404
    components = health["components"]
    assert components["database"]["status"] == "up"
    assert components["channels"]["status"] == "up"
    assert components["channels"]["ws"]["connections"] == 0
    assert "scheduler" not in components  # not built yet: /health claims only what runs
    assert "mcp" in components and "rate_limit" in components


async def test_ready_reflects_runtime() -> None:
    async with (
        live_gateway(ScriptedProvider([])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        ready = await c.get("/ready")
        await gw.runtime.stop()
        not_ready = await c.get("/ready")
        turn = await c.post("/v1/chat/completions", json=CHAT)
    assert ready.status_code == 200
    assert not_ready.status_code == 503
    assert turn.status_code == 503
    assert turn.json()["error"]["code"] == "not_ready"
