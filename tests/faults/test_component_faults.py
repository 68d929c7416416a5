"""Components failing under a running gateway (issue 24, faults item 3): an MCP server
killed mid-call, the Telegram long poll stalled, the SQLite database locked by another
connection. One real ``beamclaw serve`` meets the three in turn; each time the request in
flight fails cleanly (a bounded time, a clean answer), the rest keeps serving meanwhile,
and the component works again without a gateway restart.

(The sandbox container killed mid-``exec`` and the disk filling up during a commit are in
``test_sandbox_and_disk_faults.py``: each needs its own gateway set-up.)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from beamclaw_core.testing import (
    FakeOpenAIServer,
    FakeReply,
    FakeStep,
    FakeToolCall,
    RecordedRequest,
)
from beamclaw_gateway.fake_telegram import FakeBotApi

from .gateway_process import GatewayProcess, base_config, free_port
from .history_checks import provider_problems

pytestmark = [pytest.mark.faults, pytest.mark.slow]

TOKEN = "123456:FAULTS"
CHAT = 4242


def _last_user(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else str(c)
    return ""


def _model(request: RecordedRequest) -> FakeStep:
    """``mcp-slow``/``mcp-echo`` call the scripted MCP server's tools; after a tool the
    answer quotes its result; anything else is answered ``answer: <message>``."""
    messages: list[dict[str, Any]] = (request.body or {}).get("messages", [])
    asked = _last_user(messages)
    if messages and messages[-1].get("role") == "tool":
        return FakeReply(f"tool said: {messages[-1].get('content')}")
    if "mcp-slow" in asked:
        return FakeReply(tool_calls=(FakeToolCall("slow", {"seconds": 30}),))
    if "mcp-echo" in asked:
        return FakeReply(tool_calls=(FakeToolCall("echo", {"text": "echo is back"}),))
    return FakeReply(f"answer: {asked}")


def _config(base_url: str, port: int, tg_url: str, pid_file: Path) -> str:
    return (
        base_config(base_url, port)
        + f"""
[mcp]
call_timeout_seconds = 20
backoff_initial_seconds = 0.2
[[mcp.servers]]
name = "fx"
command = "{sys.executable}"
args = ["-m", "beamclaw_mcp.testing.scripted_server"]
env = {{ FIXTURE_PID_FILE = "{pid_file}" }}
[gateway.channels.telegram]
enabled = true
token = {{ env = "TELEGRAM_BOT_TOKEN" }}
api_base_url = "{tg_url}"
dm_policy = "open"
poll_timeout_seconds = 1
"""
    )


async def _turn(client: httpx.AsyncClient, session: str, text: str) -> httpx.Response:
    return await client.post(
        "/v1/chat/completions",
        headers={"X-Session-Id": session},
        json={"model": "beamclaw/default", "messages": [{"role": "user", "content": text}]},
    )


async def _content(client: httpx.AsyncClient, session: str, text: str) -> str:
    r = await _turn(client, session, text)
    assert r.status_code == 200, r.text
    return str(r.json()["choices"][0]["message"]["content"])


async def _history(client: httpx.AsyncClient, session: str) -> list[dict[str, Any]]:
    r = await client.get(f"/api/sessions/{session}")
    return [] if r.status_code == 404 else r.json()["messages"]


async def _until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        await asyncio.sleep(0.1)


async def _mcp_killed_mid_call(
    gw: GatewayProcess, client: httpx.AsyncClient, pid_file: Path
) -> None:
    async def mcp_status() -> str:
        return str((await client.get("/health")).json()["components"]["mcp"].get("status"))

    await _until(lambda: _is(mcp_status, "up"), 30, "the MCP server up")
    turn = asyncio.create_task(_turn(client, "mcp-killed", "mcp-slow please"))

    async def calling() -> bool:
        history = await _history(client, "mcp-killed")
        return any(m.get("tool_calls") for m in history)

    await _until(calling, 20, "the slow MCP call started")
    await asyncio.sleep(0.5)
    first_pid = int(pid_file.read_text())
    started = time.monotonic()
    os.kill(first_pid, signal.SIGKILL)
    # the rest keeps serving while the server is down
    assert await _content(client, "mcp-bystander", "hello") == "answer: hello"
    r = await turn
    took = time.monotonic() - started
    assert r.status_code == 200, r.text
    assert took < 15, f"the killed call took {took:.1f} s to fail"
    history = await _history(client, "mcp-killed")
    assert provider_problems(history) == []
    (result,) = [m for m in history if m["role"] == "tool"]
    print(f"\nMCP killed mid-call: failed in {took:.1f} s, tool result {result['content']!r}")
    assert "slept" not in str(result["content"]).lower(), result
    # recovery without a gateway restart: the supervisor restarts the server
    await _until(
        lambda: _pid_changed(pid_file, first_pid), 30, "the MCP server restarted with a new pid"
    )
    await _until(lambda: _is(mcp_status, "up"), 30, "the MCP server up again")
    assert await _content(client, "mcp-killed", "mcp-echo now") == "tool said: echo is back"


async def _is(read: Any, value: str) -> bool:
    return await read() == value


async def _pid_changed(pid_file: Path, old: int) -> bool:
    try:
        return int(pid_file.read_text()) != old
    except (OSError, ValueError):
        return False


async def _telegram_poll_stalled(client: httpx.AsyncClient, tg: FakeBotApi) -> None:
    def answered(text: str) -> Callable[[FakeBotApi], bool]:
        def check(tg: FakeBotApi) -> bool:
            return any(f"answer: {text}" in (m.text or "") for m in tg.messages(CHAT))

        return check

    tg.push_message(chat_id=CHAT, from_id=CHAT, text="tg one")
    await tg.wait_for(answered("tg one"), timeout=30)
    tg.hang_get_updates()
    polls = len(tg.calls_of("getUpdates"))
    tg.push_message(chat_id=CHAT, from_id=CHAT, text="tg two")
    await asyncio.sleep(3.5)  # longer than twice poll_timeout_seconds: the watchdog's turn
    assert not answered("tg two")(tg), "answered while getUpdates was held"
    # the rest keeps serving while Telegram's poll hangs
    assert await _content(client, "tg-bystander", "hi") == "answer: hi"
    tg.release_get_updates()
    await tg.wait_for(answered("tg two"), timeout=30)
    assert len(tg.calls_of("getUpdates")) > polls
    await asyncio.sleep(1.0)  # a duplicate send would show by now
    texts = [m.text or "" for m in tg.messages(CHAT)]
    for text in ("tg one", "tg two"):
        assert sum(f"answer: {text}" in t for t in texts) == 1, texts
    telegram = (await client.get("/health")).json()["components"]["channels"]
    assert "telegram" in str(telegram), telegram


async def _ws_error(gw: GatewayProcess, session: str, text: str) -> dict[str, Any]:
    """Send ``text`` over ``/ws``; the first ``error`` frame that comes back."""
    async with websockets.connect(gw.url.replace("http://", "ws://") + "/ws") as ws:
        await ws.send(
            json.dumps(
                {"type": "message", "id": f"m-{session}", "session_id": session, "text": text}
            )
        )
        while True:
            frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 40))
            if frame["type"] == "error":
                return frame


async def _writes_settled(wal: Path, quiet: float = 0.5, timeout: float = 15.0) -> None:
    """Until the write-ahead log has not changed for ``quiet`` seconds (the gateway's
    background writes are done)."""
    deadline = time.monotonic() + timeout
    last: tuple[int, int] | None = None
    since = time.monotonic()
    while time.monotonic() < deadline:
        st = wal.stat()
        now = (st.st_size, st.st_mtime_ns)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{wal} still changing after {timeout} s")


async def _sqlite_locked(gw: GatewayProcess, client: httpx.AsyncClient) -> None:
    assert await _content(client, "locked", "before the lock") == "answer: before the lock"
    before = await _history(client, "locked")
    # the turn's background writes (its transcript indexing, presumably, ≈ 0.1 s after
    # it ends) done first: one queued behind the lock ahead of the two writes below adds
    # its own 10 s to theirs
    await _writes_settled(gw.home / "beamclaw.db-wal")
    holder = sqlite3.connect(gw.home / "beamclaw.db", timeout=5, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        # JSON and /ws at once: each front end meets the lock (their writes queue behind
        # one another; the first waits the writer's 10 s busy timeout, the one queued
        # behind it meanwhile fails at once; SSE: the disk-full case)
        r, frame = await asyncio.gather(
            _turn(client, "locked", "during the lock"),
            _ws_error(gw, "locked-ws", "ws during the lock"),
        )
        took = time.monotonic() - started
        # the rest keeps serving: health answers while the lock is held
        health = await client.get("/health")
        assert health.status_code == 200, health.text
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    print(f"\nSQLite locked: {r.status_code} {r.text[:200]} in {took:.1f} s; ws {frame}")
    assert took < 20, f"the locked writes took {took:.1f} s to fail (one timeout is 10 s)"
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "storage_unavailable", r.text
    assert "database is busy" in r.json()["error"]["message"], r.text
    assert r.headers["retry-after"] == "2", r.headers
    assert frame["code"] == "storage_unavailable" and frame["retry_after"] == 2, frame
    # recovery without a restart; nothing committed before the lock is lost
    assert await _content(client, "locked", "after the lock") == "answer: after the lock"
    after = await _history(client, "locked")
    assert after[: len(before)] == before
    assert provider_problems(after) == []
    with sqlite3.connect(gw.home / "beamclaw.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@pytest.mark.timeout(300)
async def test_mcp_killed_poll_stalled_database_locked_fail_cleanly_and_recover(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "mcp.pid"
    async with (
        FakeOpenAIServer([_model], repeat_last=True) as fake,
        FakeBotApi(token=TOKEN) as tg,
    ):
        port = free_port()
        gw = GatewayProcess(
            tmp_path / "gw",
            _config(fake.base_url, port, tg.base_url, pid_file),
            port,
            env={"TELEGRAM_BOT_TOKEN": TOKEN},
        )
        await gw.start()
        try:
            async with gw.client(timeout=60) as client:
                await _mcp_killed_mid_call(gw, client, pid_file)
                await _telegram_poll_stalled(client, tg)
                await _sqlite_locked(gw, client)
        finally:
            gw.stop()
