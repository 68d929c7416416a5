"""``beamclaw mcp serve``: the server side, driven by the SDK's own client over stdio and
streamable HTTP against an in-memory ConversationBackend."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import mcp.types as mt
import pytest
import uvicorn
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from beamclaw_mcp.serve import ConversationBackend, http_app

BACKEND_SCRIPT = Path(__file__).with_name("serve_backend.py")


def _load_backend() -> Any:
    spec = importlib.util.spec_from_file_location("serve_backend", BACKEND_SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MemoryBackend()


def _data(result: mt.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    first = result.content[0]
    assert isinstance(first, mt.TextContent)
    return json.loads(first.text)


def _error_text(result: mt.CallToolResult) -> str:
    assert result.is_error
    first = result.content[0]
    assert isinstance(first, mt.TextContent)
    return first.text


async def _exercise(session: ClientSession) -> None:
    await session.initialize()
    names = {t.name for t in (await session.list_tools()).tools}
    assert names == {
        "list_conversations",
        "read_messages",
        "send_message",
        "list_pending_approvals",
        "respond_to_approval",
    }
    sent = _data(await session.call_tool("send_message", {"text": "hello", "agent": "default"}))
    assert sent["answer"] == "You said: hello"
    cid = sent["conversation_id"]
    convs = _data(await session.call_tool("list_conversations", {}))["conversations"]
    assert [c["id"] for c in convs] == [cid]
    assert convs[0]["message_count"] == 2
    msgs = _data(await session.call_tool("read_messages", {"conversation_id": cid}))
    assert [(m["role"], m["content"]) for m in msgs["messages"]] == [
        ("user", "hello"),
        ("assistant", "You said: hello"),
    ]
    waiting = _data(
        await session.call_tool("send_message", {"text": "please approve", "conversation_id": cid})
    )
    assert waiting["state"] == "awaiting_approval"
    pending = _data(await session.call_tool("list_pending_approvals", {}))["approvals"]
    assert [a["tool"] for a in pending] == ["shell"]
    outcome = _data(
        await session.call_tool(
            "respond_to_approval",
            {"approval_id": pending[0]["id"], "approve": False, "reason": "not now"},
        )
    )
    assert outcome["approved"] is False
    assert _data(await session.call_tool("list_pending_approvals", {}))["approvals"] == []
    last = _data(await session.call_tool("read_messages", {"conversation_id": cid, "limit": 1}))
    assert last["messages"][0]["content"] == "denied: not now"
    missing = await session.call_tool("read_messages", {"conversation_id": "nope"})
    assert "no conversation 'nope'" in _error_text(missing)
    boom = await session.call_tool("send_message", {"text": "boom", "conversation_id": cid})
    text = _error_text(boom)
    assert "internal error" in text
    assert "hunter2" not in text


def test_backend_fixture_satisfies_the_protocol() -> None:
    assert isinstance(_load_backend(), ConversationBackend)


async def test_serve_over_stdio_with_the_sdk_client() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(BACKEND_SCRIPT)])
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=30) as session,
    ):
        await _exercise(session)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _serve_http(app: Any) -> AsyncIterator[str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    task = asyncio.create_task(server.serve())
    for _ in range(1000):
        if server.started:
            break
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.fixture
async def http_url() -> AsyncIterator[str]:
    async for url in _serve_http(http_app(_load_backend(), token="t0ken-for-tests")):
        yield url


async def test_serve_over_streamable_http_with_the_sdk_client(http_url: str) -> None:
    headers = {"Authorization": "Bearer t0ken-for-tests"}
    async with (
        httpx2.AsyncClient(headers=headers) as client,
        streamable_http_client(http_url, http_client=client) as (read, write),
        ClientSession(read, write, read_timeout_seconds=30) as session,
    ):
        await _exercise(session)


async def test_http_serve_refuses_a_missing_or_wrong_token(http_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient() as client:
        none = await client.post(http_url, json=body)
        wrong = await client.post(http_url, json=body, headers={"Authorization": "Bearer wrong"})
    assert none.status_code == 401
    assert wrong.status_code == 401
