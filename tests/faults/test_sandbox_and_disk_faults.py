"""The sandbox's container killed mid-``exec`` and the disk filling up during a commit
(issue 24, faults item 3), each under a real ``beamclaw serve``.

* **Container killed**: the model runs a script that sleeps in the Docker sandbox; the
  test kills that session's container (``docker kill`` of the one container labelled
  with the session: Docker's engine itself keeps running, other agents use it). The
  ``exec`` call ends with an error result at once, the turn answers, another session is
  served meanwhile, and the next ``exec`` of the same session runs in a fresh container.
* **Disk full**: the gateway's home (its SQLite database and logs) lives on a 48 MiB
  tmpfs mounted by the test (root only; skipped otherwise), filled to the last byte by a
  filler file while the gateway runs. A turn fails cleanly (a JSON error, in bounded
  time), ``/health`` answers, and once the filler is removed the next turn commits;
  nothing committed before is lost and ``PRAGMA integrity_check`` is ``ok``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest

from beamclaw_core.testing import (
    FakeOpenAIServer,
    FakeReply,
    FakeStep,
    FakeToolCall,
    RecordedRequest,
)
from beamclaw_sandbox.hardening import KEY_LABEL, SANDBOX_LABEL

from .gateway_process import GatewayProcess, base_config, free_port
from .history_checks import provider_problems

pytestmark = [pytest.mark.faults, pytest.mark.slow]


def _model(request: RecordedRequest) -> FakeStep:
    messages: list[dict[str, Any]] = (request.body or {}).get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    asked = str(users[-1].get("content")) if users else ""
    if messages and messages[-1].get("role") == "tool":
        return FakeReply(f"tool said: {messages[-1].get('content')}")
    if "exec-slow" in asked:
        return FakeReply(
            tool_calls=(FakeToolCall("exec", {"script": "import time; time.sleep(60)"}),)
        )
    if "exec-quick" in asked:
        return FakeReply(tool_calls=(FakeToolCall("exec", {"script": "print(6 * 7)"}),))
    return FakeReply(f"answer: {asked}")


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


def _session_containers(session: str) -> list[Any]:
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    try:
        return list(
            client.containers.list(
                filters={"label": [f"{SANDBOX_LABEL}=1", f"{KEY_LABEL}=session:{session}"]}
            )
        )
    finally:
        client.close()


@pytest.mark.docker
@pytest.mark.timeout(300)
async def test_the_sandbox_container_killed_mid_exec_fails_the_call_and_the_next_runs(
    tmp_path: Path,
) -> None:
    session = f"exec-killed-{os.getpid()}-{time.monotonic_ns()}"
    async with FakeOpenAIServer([_model], repeat_last=True) as fake:
        port = free_port()
        config = base_config(fake.base_url, port) + "\n[sandbox]\nenabled = true\n"
        gw = GatewayProcess(tmp_path / "gw", config, port)
        await gw.start(timeout=120)
        try:
            async with gw.client(timeout=120) as client:
                turn = asyncio.create_task(_turn(client, session, "exec-slow please"))
                deadline = time.monotonic() + 90
                while not _session_containers(session):
                    assert not turn.done(), turn.result().text
                    assert time.monotonic() < deadline, "no sandbox container for the session"
                    await asyncio.sleep(0.2)
                await asyncio.sleep(1.5)  # the script is running
                (container,) = _session_containers(session)
                started = time.monotonic()
                container.kill()
                assert await _content(client, "exec-bystander", "hello") == "answer: hello"
                r = await turn
                took = time.monotonic() - started
                assert r.status_code == 200, r.text
                assert took < 30, f"the killed exec took {took:.1f} s to end"
                history = await _history(client, session)
                assert provider_problems(history) == []
                (result,) = [m for m in history if m["role"] == "tool"]
                print(f"\nsandbox container killed: ended in {took:.1f} s: {result['content']!r}")
                # recovery without a gateway restart: a fresh container
                again = await _content(client, session, "exec-quick now")
                assert "42" in again, again
        finally:
            gw.stop()


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Generator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the disk-full case needs root")
    path.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(path: Path) -> int:
    """Write zeros to ``path`` until the file system is full; the bytes written."""
    written = 0
    chunk = b"\0" * (1 << 20)
    with path.open("wb", buffering=0) as f:
        while True:
            try:
                written += f.write(chunk) or 0
            except OSError:
                break
        with contextlib.suppress(OSError):
            while True:
                written += f.write(b"\0" * 512) or 0
    return written


@pytest.mark.timeout(300)
async def test_a_full_disk_fails_the_commit_cleanly_and_freeing_it_recovers(
    tmp_path: Path,
) -> None:
    with _tmpfs(tmp_path / "disk", "48m") as disk:
        async with FakeOpenAIServer([_model], repeat_last=True) as fake:
            port = free_port()
            gw = GatewayProcess(
                tmp_path / "gw", base_config(fake.base_url, port), port, home=disk / "home"
            )
            await gw.start()
            try:
                async with gw.client(timeout=60) as client:
                    for i in range(3):
                        assert (
                            await _content(client, "disk", f"before {i}") == f"answer: before {i}"
                        )
                    before = await _history(client, "disk")
                    filler = disk / "filler"
                    _fill(filler)
                    started = time.monotonic()
                    assert os.statvfs(disk).f_bavail == 0
                    # bigger than any room left in the WAL file: the commit needs new blocks
                    big = "while the disk is full " + "x" * 400_000
                    r = await _turn(client, "disk", big)
                    took = time.monotonic() - started
                    streamed = await client.post(
                        "/v1/chat/completions",
                        headers={"X-Session-Id": "disk-sse"},
                        json={
                            "model": "beamclaw/default",
                            "stream": True,
                            "messages": [{"role": "user", "content": big}],
                        },
                    )
                    health = await client.get("/health")
                    print(f"\ndisk full: {r.status_code} {r.text[:200]} in {took:.1f} s")
                    assert health.status_code == 200, health.text
                    assert took < 30, f"the full-disk turn took {took:.1f} s"
                    print(f"disk full, streamed: {streamed.status_code} {streamed.text[:200]}")
                    for answer in (r, streamed):  # a clear 503 naming the disk, not a 500
                        if answer.status_code != 200:  # (a stream fails before it starts)
                            assert answer.status_code == 503, answer.text
                            error = answer.json()["error"]
                            assert error["code"] == "storage_unavailable", answer.text
                            assert "disk" in error["message"], answer.text
                            assert int(answer.headers["retry-after"]) > 0, answer.headers
                    assert gw.alive(), gw.log_tail()
                    filler.unlink()
                    assert await _content(client, "disk", "after") == "answer: after"
                    after = await _history(client, "disk")
                    assert after[: len(before)] == before
                    if r.status_code == 200:  # an answered turn was committed: it stays
                        assert any(m.get("content") == big for m in after)
                    assert provider_problems(after) == []
            finally:
                gw.stop()
            with sqlite3.connect(disk / "home" / "beamclaw.db") as db:
                assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
