"""``beamclaw mcp serve`` driven by the official MCP SDK client over stdio.

The real command runs the whole agent system in a child process (database, tools, core,
the configured OpenAI-compatible provider chain) against the fake OpenAI server over real
HTTP. The client sends a message and gets the scripted answer, then sends one that needs
an approval, lists it, approves it, and reads the answer of the resumed turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import httpx2
import mcp.types as mt
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from beamclaw_core.testing import FakeOpenAIServer, FakeReply, FakeToolCall

BEAMCLAW = Path(sys.executable).with_name("beamclaw")


def _data(result: mt.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    first = result.content[0]
    assert isinstance(first, mt.TextContent)
    return json.loads(first.text)


def _config(path: Path, base_url: str) -> Path:
    path.write_text(
        f"""
[core]
default_provider = "fake"
autonomy_level = "supervised"
[core.providers.fake]
kind = "openai"
base_url = "{base_url}"
model = "fake-model"
[core.queue]
debounce_ms = 0
[obs]
log_level = "WARNING"
""",
        encoding="utf-8",
    )
    return path


SCRIPT = [
    FakeReply("Hello from BeamClaw."),
    FakeReply(tool_calls=(FakeToolCall("write_file", {"path": "note.txt", "content": "hi"}),)),
    FakeReply("Saved the note."),
]


async def _drive(session: ClientSession) -> str:
    """Send, stop for an approval, approve, read: the conversation's id."""
    await session.initialize()
    sent = _data(await session.call_tool("send_message", {"text": "Hi there"}))
    assert sent["state"] == "idle"
    assert sent["answer"] == "Hello from BeamClaw."
    cid = sent["conversation_id"]

    waiting = _data(
        await session.call_tool("send_message", {"text": "Write a note", "conversation_id": cid})
    )
    assert waiting["state"] == "awaiting_approval"
    pending = _data(await session.call_tool("list_pending_approvals", {}))["approvals"]
    assert [(a["tool"], a["conversation_id"]) for a in pending] == [("write_file", cid)]
    assert pending[0]["arguments"] == {"path": "note.txt", "content": "hi"}
    assert waiting["pending_approvals"] == [pending[0]["id"]]

    outcome = _data(
        await session.call_tool(
            "respond_to_approval", {"approval_id": pending[0]["id"], "approve": True}
        )
    )
    assert outcome == {
        "id": pending[0]["id"],
        "approved": True,
        "conversation_id": cid,
        "state": "idle",
    }
    assert _data(await session.call_tool("list_pending_approvals", {}))["approvals"] == []
    again = await session.call_tool(
        "respond_to_approval", {"approval_id": pending[0]["id"], "approve": False}
    )
    assert again.is_error
    messages = _data(await session.call_tool("read_messages", {"conversation_id": cid}))
    roles = [(m["role"], m["content"]) for m in messages["messages"]]
    assert roles[0] == ("user", "Hi there")
    assert roles[-1] == ("assistant", "Saved the note.")
    assert [r for r, _ in roles] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    convs = _data(await session.call_tool("list_conversations", {}))["conversations"]
    assert [(c["id"], c["message_count"]) for c in convs] == [(cid, 6)]
    return cid


def _check_the_note_and_the_request(home: Path, fake: FakeOpenAIServer) -> None:
    assert (home / "agents" / "default" / "note.txt").read_text(encoding="utf-8") == "hi"
    # the approved tool's result went back to the model right after its call
    third = fake.requests[2].body["messages"]
    assert third[-1]["role"] == "tool"
    assert third[-2]["tool_calls"][0]["function"]["name"] == "write_file"


async def test_mcp_serve_over_stdio_sends_and_answers_approvals(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeOpenAIServer(SCRIPT) as fake:
        config = _config(tmp_path / "beamclaw.toml", fake.base_url)
        env = {**os.environ, "BEAMCLAW_HOME": str(home), "BEAMCLAW_CONFIG": str(config)}
        params = StdioServerParameters(command=str(BEAMCLAW), args=["mcp", "serve"], env=env)
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=60) as session,
        ):
            await _drive(session)
    _check_the_note_and_the_request(home, fake)


async def _beamclaw(env: dict[str, str], *args: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        str(BEAMCLAW),
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode == 0, out.decode(errors="replace")


async def test_mcp_serve_attaches_to_a_running_gateway(tmp_path: Path) -> None:
    """With a daemon holding the home, ``mcp serve`` serves that daemon's sessions: the
    conversation an MCP client drives is the gateway's, visible over its REST API."""
    home = tmp_path / "home"
    async with FakeOpenAIServer(SCRIPT) as fake:
        config = _config(tmp_path / "beamclaw.toml", fake.base_url)
        port = _free_port()
        env = {
            **os.environ,
            "BEAMCLAW_HOME": str(home),
            "BEAMCLAW_CONFIG": str(config),
            "BEAMCLAW_PORT": str(port),
        }
        await _beamclaw(env, "start")
        try:
            params = StdioServerParameters(command=str(BEAMCLAW), args=["mcp", "serve"], env=env)
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write, read_timeout_seconds=60) as session,
            ):
                cid = await _drive(session)
            async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as gateway:
                detail = (await gateway.get(f"/api/sessions/{cid}")).json()
        finally:
            await _beamclaw(env, "stop")
    assert detail["session"]["channel"] == "mcp"
    assert detail["messages"][-1]["content"] == "Saved the note."
    _check_the_note_and_the_request(home, fake)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_mcp_serve_over_http_requires_its_token(tmp_path: Path) -> None:
    port = _free_port()
    async with FakeOpenAIServer([FakeReply("Hello over HTTP.")]) as fake:
        config = _config(tmp_path / "beamclaw.toml", fake.base_url)
        env = {
            **os.environ,
            "BEAMCLAW_HOME": str(tmp_path / "home"),
            "BEAMCLAW_CONFIG": str(config),
            "MCP_TOKEN": "t0ken-for-tests",
        }
        log = tmp_path / "serve.stderr"
        stderr = log.open("wb")
        proc = await asyncio.create_subprocess_exec(
            str(BEAMCLAW),
            *("mcp", "serve", "--http", "--port", str(port), "--token-env", "MCP_TOKEN"),
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr,
        )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            async with httpx2.AsyncClient() as anonymous:
                async with asyncio.timeout(60):
                    while True:
                        try:
                            refused = await anonymous.post(url, json={"jsonrpc": "2.0", "id": 1})
                            break
                        except httpx2.TransportError:
                            assert proc.returncode is None, log.read_text(errors="replace")
                            await asyncio.sleep(0.05)
            assert refused.status_code == 401
            headers = {"Authorization": "Bearer t0ken-for-tests"}
            async with (
                httpx2.AsyncClient(headers=headers) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write, read_timeout_seconds=60) as session,
            ):
                await session.initialize()
                sent = _data(await session.call_tool("send_message", {"text": "Hi"}))
                assert (sent["state"], sent["answer"]) == ("idle", "Hello over HTTP.")
        finally:
            try:
                if proc.returncode is None:  # an early exit is reported by the loop above
                    proc.send_signal(signal.SIGTERM)
                async with asyncio.timeout(30):
                    code = await proc.wait()
            finally:
                stderr.close()  # also when it failed: a leaked handle fails a later test
        assert code == 0, log.read_text(errors="replace")
