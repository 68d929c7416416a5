"""A2A: agent card and JSON-RPC task lifecycle, persisted."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from beamclaw_core.testing import CallTool, Fail, Hang, Reply, ScriptedProvider

from .conftest import gateway_config, live_gateway


def send(text: str, **message: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": "m-1",
                "parts": [{"kind": "text", "text": text}],
                **message,
            }
        },
    }


def rpc(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "x", "method": method, "params": params}


async def test_agent_card() -> None:
    async with (
        live_gateway(ScriptedProvider([])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        card = (await c.get("/.well-known/agent.json")).json()
    assert card["url"] == f"{gw.base_url}/a2a"
    assert card["preferredTransport"] == "JSONRPC"
    assert card["skills"][0]["id"] == "chat"
    assert "security" not in card


async def test_send_completes_and_tasks_are_persisted_and_listed() -> None:
    provider = ScriptedProvider([Reply("A2A answer"), Reply("second in context")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        first = (await c.post("/a2a", json=send("hello"))).json()["result"]
        task = first
        second = (await c.post("/a2a", json=send("again", contextId=task["contextId"]))).json()[
            "result"
        ]
        got = (await c.post("/a2a", json=rpc("tasks/get", id=task["id"], historyLength=1))).json()
        listing = (
            await c.post("/a2a", json=rpc("tasks/list", contextId=task["contextId"], pageSize=1))
        ).json()
        missing = (await c.post("/a2a", json=rpc("tasks/get", id="nope"))).json()
        not_cancelable = (await c.post("/a2a", json=rpc("tasks/cancel", id=task["id"]))).json()
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0]["text"] == "A2A answer"
    assert [m["role"] for m in task["history"]] == ["user", "agent"]
    assert second["contextId"] == task["contextId"] and second["status"]["state"] == "completed"
    # same context = same session: the second turn saw the first exchange
    assert any(m.text == "A2A answer" for m in provider.calls[1].messages)
    assert got["result"]["status"]["state"] == "completed"
    assert len(got["result"]["history"]) == 1
    assert listing["result"]["totalSize"] == 2
    assert len(listing["result"]["tasks"]) == 1 and listing["result"]["nextPageToken"] == "1"
    assert missing["error"]["code"] == -32001
    assert not_cancelable["error"]["code"] == -32002


async def test_input_required_while_approval_pending_then_answered() -> None:
    provider = ScriptedProvider(
        [CallTool("write_file", {"path": "a.txt", "content": "x"}), Reply("written")]
    )
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        waiting = (await c.post("/a2a", json=send("write a file"))).json()["result"]
        answer = send("yes", taskId=waiting["id"], contextId=waiting["contextId"])
        done = (await c.post("/a2a", json=answer)).json()["result"]
        late = (await c.post("/a2a", json=answer)).json()
    assert waiting["status"]["state"] == "input-required"
    assert "write_file" in waiting["status"]["message"]["parts"][0]["text"]
    assert done["status"]["state"] == "completed"
    assert done["artifacts"][0]["parts"][0]["text"].endswith("written")
    assert late["error"]["code"] == -32602


async def test_non_blocking_send_cancel_and_failure() -> None:
    config = gateway_config()
    config.core.agentic_loop.max_attempts = 1
    provider = ScriptedProvider([Hang(), Fail("auth")])
    async with live_gateway(provider, config) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        body = send("slow")
        body["params"]["configuration"] = {"blocking": False}
        started = (await c.post("/a2a", json=body)).json()["result"]
        for _ in range(200):
            if provider.calls:
                break
            await asyncio.sleep(0.01)
        canceled = (await c.post("/a2a", json=rpc("tasks/cancel", id=started["id"]))).json()
        failed = (await c.post("/a2a", json=send("boom"))).json()["result"]
        bad = (await c.post("/a2a", content=b"{nope")).json()
        unknown = (await c.post("/a2a", json=rpc("tasks/resubscribe"))).json()
    assert started["status"]["state"] in ("submitted", "working")
    assert canceled["result"]["status"]["state"] == "canceled"
    assert failed["status"]["state"] == "failed"
    assert bad["error"]["code"] == -32700
    assert unknown["error"]["code"] == -32601


async def test_tasks_survive_a_restart(beamclaw_home) -> None:
    provider = ScriptedProvider([Reply("persisted")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        task = (await c.post("/a2a", json=send("hi"))).json()["result"]
    async with (
        live_gateway(ScriptedProvider([])) as gw2,
        httpx.AsyncClient(base_url=gw2.base_url) as c,
    ):
        got = (await c.post("/a2a", json=rpc("tasks/get", id=task["id"]))).json()["result"]
    assert got == task


async def test_disabled() -> None:
    config = gateway_config()
    config.gateway.a2a.enabled = False
    async with (
        live_gateway(ScriptedProvider([]), config) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        assert (await c.get("/.well-known/agent.json")).status_code == 404
        assert (await c.post("/a2a", json=rpc("tasks/list"))).status_code == 404
