"""``kill -9`` of a real gateway process mid-turn, then a restart (issue 4 "done when").

A real ``beamclaw serve`` runs against the fake OpenAI server over HTTP. A turn asks for a
slow ``bash`` tool (autonomy ``full``); once the tool runs, the process is killed with
SIGKILL. After a restart on the same home, every committed message is there, the pending
tool call has exactly one "interrupted" result, the whole history is valid, and the
session takes the next turn. A turn sent with an ``Idempotency-Key`` and killed the same
way does not leave its key stuck: the retry with the same key runs afresh, once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx

from beamclaw_core.testing import FakeOpenAIServer, FakeReply, FakeToolCall

BEAMCLAW = Path(sys.executable).with_name("beamclaw")
SESSION = "kill9-session"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(path: Path, base_url: str, port: int, extra: str = "") -> Path:
    path.write_text(
        f"""
[core]
default_provider = "fake"
autonomy_level = "full"
[core.providers.fake]
kind = "openai"
base_url = "{base_url}"
model = "fake-model"
[core.queue]
debounce_ms = 0
[gateway.http]
port = {port}
[obs]
log_level = "WARNING"
{extra}""",
        encoding="utf-8",
    )
    return path


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([str(BEAMCLAW), "serve"], env=env, stdout=out, stderr=out)


async def _wait_ready(client: httpx.AsyncClient, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if (await client.get("/ready")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError("gateway not ready in time")


def _assert_valid_history(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered exactly once, in order, before anything else."""
    pending: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert pending, f"tool result without a call: {m}"
            assert m["tool_call_id"] == pending.pop(0)
            continue
        assert not pending, f"unanswered tool calls {pending} before {m['role']}"
        if m["role"] == "assistant":
            pending = [c["id"] for c in m.get("tool_calls") or []]
    assert not pending


def _slow_tool_then(marker: Path, answer: str) -> list[FakeReply]:
    """The model's script: a tool call that touches ``marker`` and then sleeps (the
    moment to kill the gateway), then ``answer`` for the next request."""
    return [
        FakeReply(
            text="Let me check.",
            tool_calls=(FakeToolCall("bash", {"command": f"touch {marker} && sleep 120"}),),
        ),
        FakeReply(answer),
    ]


async def _kill_9_while_the_tool_runs(
    env: dict[str, str],
    log: Path,
    client: httpx.AsyncClient,
    marker: Path,
    request: Callable[[], Coroutine[Any, Any, httpx.Response]],
) -> float:
    """Start a gateway, send ``request``, and SIGKILL the gateway once its tool has
    started; returns the monotonic time of the kill."""
    gateway = _start(env, log)
    try:
        await _wait_ready(client, gateway, log)
        turn = asyncio.create_task(request())
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline, "the tool never started"
            await asyncio.sleep(0.05)
        gateway.send_signal(signal.SIGKILL)
        gateway.wait(10)
        killed = time.monotonic()
        turn.cancel()
        await asyncio.gather(turn, return_exceptions=True)
        return killed
    finally:
        if gateway.poll() is None:
            gateway.kill()


def _stop(gateway: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 30 s."""
    gateway.send_signal(signal.SIGTERM)
    try:
        gateway.wait(30)
    finally:
        if gateway.poll() is None:
            gateway.kill()


async def test_kill_9_mid_tool_then_restart_recovers_every_committed_message(
    tmp_path: Path,
) -> None:
    port = _free_port()
    marker = tmp_path / "tool-started"
    script = _slow_tool_then(marker, "Back after the restart.")
    async with FakeOpenAIServer(script) as fake:
        env = {
            **os.environ,
            "BEAMCLAW_HOME": str(tmp_path / "home"),
            "BEAMCLAW_CONFIG": str(_config(tmp_path / "beamclaw.toml", fake.base_url, port)),
        }
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            log = tmp_path / "gateway.log"
            await _kill_9_while_the_tool_runs(
                env,
                log,
                client,
                marker,
                lambda: client.post(
                    "/v1/chat/completions",
                    headers={"X-Session-Id": SESSION},
                    json={
                        "model": "beamclaw/default",
                        "messages": [{"role": "user", "content": "run the slow thing"}],
                    },
                ),
            )

            second = _start(env, log)
            try:
                await _wait_ready(client, second, log)
                r = await client.get(f"/api/sessions/{SESSION}")
                assert r.status_code == 200, r.text
                messages = r.json()["messages"]
                roles = [m["role"] for m in messages]
                assert roles[:3] == ["user", "assistant", "tool"]
                assert messages[0]["content"] == "run the slow thing"
                assert messages[1]["tool_calls"][0]["function"]["name"] == "bash"
                assert "interrupted" in messages[2]["content"].lower()
                _assert_valid_history(messages)
                seqs = [m["seq"] for m in messages]
                assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

                answer = await client.post(
                    "/v1/chat/completions",
                    headers={"X-Session-Id": SESSION},
                    json={
                        "model": "beamclaw/default",
                        "messages": [{"role": "user", "content": "are you back?"}],
                    },
                )
                assert answer.status_code == 200, answer.text
                assert answer.json()["choices"][0]["message"]["content"] == (
                    "Back after the restart."
                )
                after = (await client.get(f"/api/sessions/{SESSION}")).json()["messages"]
                _assert_valid_history(after)
                assert after[: len(messages)] == messages
            finally:
                _stop(second)
    # the recovered turn's history went to the model well formed
    last = fake.requests[-1].body["messages"]
    assert [m["role"] for m in last if m["role"] != "system"][:4] == [
        "user",
        "assistant",
        "tool",
        "user",
    ]


async def test_kill_9_mid_turn_then_restart_a_retry_with_the_same_idempotency_key_runs(
    tmp_path: Path,
) -> None:
    port = _free_port()
    marker = tmp_path / "tool-started"
    script = _slow_tool_then(marker, "Done after the retry.")
    lease = 1.0
    request = {
        "model": "beamclaw/default",
        "messages": [{"role": "user", "content": "run the slow thing once"}],
    }
    headers = {"X-Session-Id": "kill9-idempotent", "Idempotency-Key": "retry-me"}
    async with FakeOpenAIServer(script) as fake:
        extra = f"[gateway.api]\nidempotency_lease_seconds = {lease}\n"
        env = {
            **os.environ,
            "BEAMCLAW_HOME": str(tmp_path / "home"),
            "BEAMCLAW_CONFIG": str(_config(tmp_path / "beamclaw.toml", fake.base_url, port, extra)),
        }
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            log = tmp_path / "gateway.log"
            killed = await _kill_9_while_the_tool_runs(
                env,
                log,
                client,
                marker,
                lambda: client.post("/v1/chat/completions", headers=headers, json=request),
            )

            second = _start(env, log)
            try:
                await _wait_ready(client, second, log)
                await asyncio.sleep(max(0.0, killed + lease * 1.5 - time.monotonic()))
                retry = await client.post("/v1/chat/completions", headers=headers, json=request)
                replay = await client.post("/v1/chat/completions", headers=headers, json=request)
            finally:
                _stop(second)
    assert retry.status_code == 200, retry.text
    assert "idempotent-replayed" not in retry.headers
    assert retry.json()["choices"][0]["message"]["content"] == "Done after the retry."
    assert replay.status_code == 200, replay.text
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == retry.json()
    assert len(fake.requests) == 2  # the killed turn's call and the retry's, nothing more
