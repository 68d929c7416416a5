"""``beamclaw mcp serve``: its tools over the Conversation port of a real Core, and the
server driven by the SDK's own client over streamable HTTP (stdio, embedded and attached
to a running gateway, is covered end to end in tests/integration/test_mcp_serve_cli.py)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import mcp.types as mt
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from beamclaw_core.api import Core
from beamclaw_core.conversation import Conversation, HistoryPage, LocalConversation
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_gateway.errors import GatewayConfigError
from beamclaw_gateway.mcp_serve import ConversationTools, check_mcp_bind_policy, http_app
from beamclaw_memory import Database
from beamclaw_tools import Autonomy, SessionRef, ToolDef, ToolOutput, ToolRegistry

Make = Callable[[ScriptedProvider], Awaitable[ConversationTools]]


class Guarded:
    definition = ToolDef(
        name="guarded",
        description="needs approval",
        requires_approval=True,
        min_autonomy=Autonomy.SUPERVISED,
    )

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        return ToolOutput.ok("ran")


@pytest.fixture
async def make_tools(tmp_path: Path) -> AsyncIterator[Make]:
    made: list[tuple[Core, Database, LocalConversation]] = []

    async def factory(provider: ScriptedProvider) -> ConversationTools:
        settings = CoreSettings()
        settings.queue.debounce_ms = 0
        settings.reset.daily_hour = None
        tools = ToolRegistry()
        tools.register(Guarded())
        db = Database(f"sqlite:///{tmp_path / 'b.db'}")
        core = Core.create(settings, db, provider=provider, tools=tools, system_prompt="t")
        await core.start(maintenance=False)
        conversation = LocalConversation(lambda: core)
        made.append((core, db, conversation))
        return ConversationTools(conversation, default_agent="default", follow_seconds=10)

    yield factory
    for core, db, conversation in made:
        await conversation.drain(1.0)
        await core.stop()
        await db.dispose()


async def test_the_local_conversation_satisfies_the_port(make_tools: Make) -> None:
    tools = await make_tools(ScriptedProvider([]))
    assert isinstance(tools.conversation, Conversation)


async def test_unknown_ids_raise_lookup_error(make_tools: Make) -> None:
    tools = await make_tools(ScriptedProvider([]))
    with pytest.raises(LookupError, match="no conversation 'nope'"):
        await tools.read_messages("nope")
    with pytest.raises(LookupError):
        await tools.send_message_and_wait("nope", "hi")
    with pytest.raises(LookupError, match="no pending approval"):
        await tools.respond_to_approval("r-1", approve=True)
    with pytest.raises(LookupError):
        await tools.list_pending_approvals("nope")


async def test_send_to_an_existing_conversation_of_another_agent_is_refused(
    make_tools: Make,
) -> None:
    tools = await make_tools(ScriptedProvider([Reply("a")]))
    sent = await tools.send_message_and_wait(None, "hi")
    with pytest.raises(ValueError, match="belongs to agent 'default'"):
        await tools.send_message_and_wait(sent.conversation_id, "x", agent="other")


async def test_a_turn_without_answer_in_time_raises_timeout(make_tools: Make) -> None:
    tools = await make_tools(ScriptedProvider([Hang()]))
    with pytest.raises(TimeoutError, match="the turn goes on"):
        await tools.send_message_and_wait(None, "hi", wait_seconds=0.2)


async def test_denied_approval_continues_the_turn(make_tools: Make) -> None:
    provider = ScriptedProvider([CallTool("guarded", {}), Reply("Understood, not running it.")])
    tools = await make_tools(provider)
    waiting = await tools.send_message_and_wait(None, "run it")
    assert waiting.state == "awaiting_approval"
    (pending,) = await tools.list_pending_approvals(waiting.conversation_id)
    outcome = await tools.respond_to_approval(pending.id, approve=False)
    assert (outcome.approved, outcome.state) == (False, "idle")
    messages = await tools.read_messages(waiting.conversation_id)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].content == "[tool call guarded {}]"
    assert messages[2].tool_name == "guarded"
    assert "Denied" in messages[2].content
    assert messages[-1].content == "Understood, not running it."
    assert await tools.list_pending_approvals() == []
    with pytest.raises(LookupError):
        await tools.respond_to_approval(pending.id, approve=True)
    older = await tools.read_messages(
        waiting.conversation_id, limit=1, before_sequence=messages[-1].sequence
    )
    assert [m.role for m in older] == ["tool"]
    (listed,) = await tools.list_conversations()
    assert (listed.id, listed.message_count) == (waiting.conversation_id, 4)
    assert listed.preview == "Understood, not running it."


def test_http_mode_refuses_a_public_bind_without_a_token() -> None:
    check_mcp_bind_policy("127.0.0.1", None)
    check_mcp_bind_policy("0.0.0.0", "secret-token")
    with pytest.raises(GatewayConfigError, match="without a token"):
        check_mcp_bind_policy("0.0.0.0", None)


# ------------------------------------------------------------ the server, over HTTP


class LeakyHistory:
    """The port of a real conversation whose history fails with a secret in the error:
    what an unexpected failure inside BeamClaw looks like to the MCP server."""

    def __init__(self, inner: Conversation) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def history(self, session_id: str, **kw: Any) -> HistoryPage:
        if session_id == "boom":
            raise RuntimeError("database password hunter2 rejected")
        return await self._inner.history(session_id, **kw)


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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def http_url(make_tools: Make) -> AsyncIterator[str]:
    provider = ScriptedProvider(
        [Reply("You said: hello"), CallTool("guarded", {}), Reply("Not running it.")]
    )
    tools = await make_tools(provider)
    tools.conversation = LeakyHistory(tools.conversation)  # type: ignore[assignment]
    port = _free_port()
    app = http_app(tools, token="t0ken-for-tests")
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


async def test_serve_over_streamable_http_with_the_sdk_client(http_url: str) -> None:
    headers = {"Authorization": "Bearer t0ken-for-tests"}
    async with (
        httpx2.AsyncClient(headers=headers) as client,
        streamable_http_client(http_url, http_client=client) as (read, write),
        ClientSession(read, write, read_timeout_seconds=30) as session,
    ):
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == {
            "list_conversations",
            "read_messages",
            "send_message",
            "list_pending_approvals",
            "respond_to_approval",
        }
        sent = _data(await session.call_tool("send_message", {"text": "hello"}))
        assert (sent["answer"], sent["state"]) == ("You said: hello", "idle")
        cid = sent["conversation_id"]
        convs = _data(await session.call_tool("list_conversations", {}))["conversations"]
        assert [(c["id"], c["message_count"]) for c in convs] == [(cid, 2)]
        msgs = _data(await session.call_tool("read_messages", {"conversation_id": cid}))
        assert [(m["role"], m["content"]) for m in msgs["messages"]] == [
            ("user", "hello"),
            ("assistant", "You said: hello"),
        ]
        waiting = _data(
            await session.call_tool("send_message", {"text": "run it", "conversation_id": cid})
        )
        assert waiting["state"] == "awaiting_approval"
        pending = _data(await session.call_tool("list_pending_approvals", {}))["approvals"]
        assert [a["tool"] for a in pending] == ["guarded"]
        outcome = _data(
            await session.call_tool(
                "respond_to_approval", {"approval_id": pending[0]["id"], "approve": False}
            )
        )
        assert (outcome["approved"], outcome["state"]) == (False, "idle")
        assert _data(await session.call_tool("list_pending_approvals", {}))["approvals"] == []
        last = _data(await session.call_tool("read_messages", {"conversation_id": cid, "limit": 1}))
        assert last["messages"][0]["content"] == "Not running it."
        missing = await session.call_tool("read_messages", {"conversation_id": "nope"})
        assert "no conversation 'nope'" in _error_text(missing)
        boom = _error_text(await session.call_tool("read_messages", {"conversation_id": "boom"}))
        assert "internal error" in boom
        assert "hunter2" not in boom


async def test_http_serve_refuses_a_missing_or_wrong_token(http_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient() as client:
        none = await client.post(http_url, json=body)
        wrong = await client.post(http_url, json=body, headers={"Authorization": "Bearer wrong"})
    assert none.status_code == 401
    assert wrong.status_code == 401
