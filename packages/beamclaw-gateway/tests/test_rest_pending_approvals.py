"""/api/approvals: an approval raised by a ``/v1`` turn in ``wait`` mode is listed and
answered over REST, the turn completes, and a second answer is refused (issue 19)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from beamclaw_core import AgentSettings
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_core.workspace.layout import agent_dir
from beamclaw_gateway.testing import quiet_config

from .conftest import live_gateway

WRITE = CallTool("write_file", {"path": "note.txt", "content": "hello"})
CHAT = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "write a note"}]}
WAIT = {"X-Approval-Mode": "wait", "X-User-Id": "ann"}


async def pending(c: httpx.AsyncClient) -> list[dict[str, Any]]:
    async with asyncio.timeout(10):
        while True:
            found: list[dict[str, Any]] = (await c.get("/api/approvals")).json()["approvals"]
            if found:
                return found
            await asyncio.sleep(0.02)


async def test_a_v1_turn_waits_for_an_answer_given_over_rest() -> None:
    provider = ScriptedProvider([WRITE, Reply("The note is written.")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        turn = asyncio.create_task(c.post("/v1/chat/completions", json=CHAT, headers=WAIT))
        [approval] = await pending(c)
        of_session = await c.get("/api/approvals", params={"session_id": approval["session_id"]})
        of_other = (await c.get("/api/approvals", params={"session_id": "nobody"})).json()
        answered = await c.post(f"/api/approvals/{approval['id']}", json={"decision": "approve"})
        twice = await c.post(f"/api/approvals/{approval['id']}", json={"decision": "deny"})
        unknown = await c.post("/api/approvals/no-such-id", json={"decision": "approve"})
        wrong = await c.post(f"/api/approvals/{approval['id']}", json={"decision": "maybe"})
        response = await asyncio.wait_for(turn, 10)
        after = (await c.get("/api/approvals")).json()
        note = (agent_dir("default", gw.runtime.home) / "note.txt").read_text()
    assert (approval["tool"], approval["agent_id"]) == ("write_file", "default")
    assert approval["args"] == {"path": "note.txt", "content": "hello"}
    assert of_session.json() == {"approvals": [approval]} and of_other == {"approvals": []}
    assert answered.status_code == 200
    assert answered.json() == {"approval": approval, "decision": "approve"}
    assert twice.status_code == 409
    assert twice.json()["error"]["code"] == "approval_already_answered"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "approval_not_found"
    assert wrong.status_code == 422
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"].endswith("The note is written.")
    assert after == {"approvals": []} and note == "hello"


async def test_a_denial_over_rest_lets_the_turn_go_on_without_the_tool() -> None:
    provider = ScriptedProvider([WRITE, Reply("I could not write it.")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        turn = asyncio.create_task(c.post("/v1/chat/completions", json=CHAT, headers=WAIT))
        [approval] = await pending(c)
        denied = await c.post(f"/api/approvals/{approval['id']}", json={"decision": "deny"})
        response = await asyncio.wait_for(turn, 10)
        history = (await c.get(f"/api/sessions/{approval['session_id']}")).json()["messages"]
    assert denied.status_code == 200
    assert response.json()["choices"][0]["message"]["content"].endswith("I could not write it.")
    tool = next(m for m in history if m["role"] == "tool")
    assert "Denied" in tool["content"]
    assert not (agent_dir("default", gw.runtime.home) / "note.txt").exists()


async def test_an_agent_can_wait_by_configuration_and_a_header_overrides_it() -> None:
    config = quiet_config()
    config.agents["default"] = AgentSettings(approval_mode="wait")
    provider = ScriptedProvider([WRITE, Reply("Waited."), WRITE, Reply("Denied at once.")])
    async with live_gateway(provider, config) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        turn = asyncio.create_task(c.post("/v1/chat/completions", json=CHAT))
        [approval] = await pending(c)
        await c.post(f"/api/approvals/{approval['id']}", json={"decision": "approve"})
        waited = await asyncio.wait_for(turn, 10)
        denied = await c.post(
            "/v1/chat/completions", json=CHAT, headers={"X-Approval-Mode": "deny"}
        )
    assert waited.json()["choices"][0]["message"]["content"].endswith("Waited.")
    assert denied.json()["choices"][0]["message"]["content"].endswith("Denied at once.")


async def test_a_pending_approval_outlives_a_gateway_restart() -> None:
    """Stopped while a turn waits for an approval, the next gateway on the same home
    lists the same approval; answered there, the turn completes in the same session."""
    first = ScriptedProvider([WRITE])
    config = quiet_config()
    config.gateway.http.shutdown_grace_seconds = 1  # then the waiting /v1 request is cut
    async with live_gateway(first, config) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        turn = asyncio.create_task(c.post("/v1/chat/completions", json=CHAT, headers=WAIT))
        [before] = await pending(c)
        turn.cancel()
        await asyncio.gather(turn, return_exceptions=True)
    second = ScriptedProvider([Reply("Written after the restart.")])
    async with live_gateway(second) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        [after] = await pending(c)
        answered = await c.post(f"/api/approvals/{after['id']}", json={"decision": "approve"})
        async with asyncio.timeout(10):
            while True:
                detail = (await c.get(f"/api/sessions/{after['session_id']}")).json()
                if (
                    detail["messages"][-1]["role"] == "assistant"
                    and detail["session"]["state"] == "idle"
                ):
                    break
                await asyncio.sleep(0.02)
        note = (agent_dir("default", gw.runtime.home) / "note.txt").read_text()
    assert after == before and answered.status_code == 200
    assert detail["messages"][-1]["content"] == "Written after the restart."
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert note == "hello"
