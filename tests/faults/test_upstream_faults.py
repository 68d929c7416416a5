"""Upstream fault matrix through the real gateway (issue 24, faults item 2).

A real ``beamclaw serve`` talks over HTTP to a fault-scripted fake OpenAI server: each
request's last user message names the fault to play (429 with ``Retry-After``, 500, 502,
503, read timeout, slow drip, truncated SSE, invalid JSON, oversized body); the connect
timeout goes to an agent whose provider points at a listener that never accepts. Every
fault is sent as a JSON and as a streaming request. The client gets the documented error
(status and ``{"error": {type, code}}``, in-band for streams), the session takes the next
turn, and afterwards the gateway's open file descriptors and asyncio tasks are back at
their baseline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from beamclaw_core.testing import (
    FakeOpenAIServer,
    FakeReply,
    FakeStep,
    HttpFault,
    InvalidJSON,
    RawBody,
    RecordedRequest,
    ServerHang,
    Truncate,
)

from .gateway_process import GatewayProcess, base_config, free_port

pytestmark = [pytest.mark.faults, pytest.mark.slow]

OVERSIZED = b'{"choices": [{"message": {"content": "' + b"x" * 300_000 + b'"}}]}'
SLOW_DRIP = FakeReply(tokens=tuple(f"t{i} " for i in range(40)), delay=0.2)


@dataclass(frozen=True)
class Case:
    name: str
    status: int
    """The HTTP status of a JSON request (streams answer 200 and report in-band)."""
    code: str
    step: FakeStep | None = None
    agent: str = "default"
    stream_only: bool = False
    """A drip is a stream's fault: the fake server sends a JSON answer in one piece."""


CASES = (
    Case("rate_limit", 429, "rate_limit", HttpFault.rate_limit(retry_after=1)),
    Case("http_500", 502, "network", HttpFault.server_error(500)),
    Case("http_502", 502, "network", HttpFault.server_error(502)),
    Case("http_503", 502, "network", HttpFault.server_error(503)),
    Case("connect_timeout", 502, "network", agent="dead"),
    Case("read_timeout", 502, "network", ServerHang()),
    Case("slow_drip", 502, "network", SLOW_DRIP, stream_only=True),
    Case("truncated_sse", 502, "network", Truncate(after_events=3)),
    Case("invalid_json", 502, "unknown", InvalidJSON()),
    Case(
        "oversized_body",
        502,
        "unknown",
        RawBody(OVERSIZED, content_type="application/json"),
    ),
)
BY_NAME = {c.name: c for c in CASES}


def _fault_of(request: RecordedRequest) -> FakeStep:
    """Play the fault named by the last user message (``fault:<name>``), else answer."""
    messages: list[dict[str, Any]] = (request.body or {}).get("messages", [])
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    text = str(last.get("content", ""))
    name = text.removeprefix("fault:") if text.startswith("fault:") else ""
    case = BY_NAME.get(name)
    if case is not None and case.step is not None:
        return case.step
    return FakeReply("fine")


@pytest.fixture
def blackhole() -> Iterator[int]:
    """A port whose accept queue is full: a SYN to it is dropped, so connect times out."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    fillers: list[socket.socket] = []
    for _ in range(8):
        s = socket.socket()
        s.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            s.connect(("127.0.0.1", listener.getsockname()[1]))
        fillers.append(s)
    try:
        yield int(listener.getsockname()[1])
    finally:
        for s in fillers:
            s.close()
        listener.close()


def _config(base_url: str, port: int, dead_port: int) -> str:
    limits = """connect_timeout = 0.5
read_timeout = 1.0
stream_idle_timeout = 1.0
total_timeout = 3.0
max_response_bytes = 65536
"""
    return (
        base_config(base_url, port, max_attempts=2).replace(
            'model = "fake-model"\n', f'model = "fake-model"\n{limits}', 1
        )
        + f"""
[core.providers.dead]
kind = "openai"
base_url = "http://127.0.0.1:{dead_port}/v1"
model = "fake-model"
{limits}
[agents.dead]
provider = "dead"
[core.maintenance]
check_interval_seconds = 0.5
lane_idle_seconds = 1.0
"""
    )


def _sse_error(text: str) -> dict[str, Any]:
    """The one in-band error object of a failed stream (which still ends with [DONE])."""
    events = [
        line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: ")
    ]
    assert events and events[-1] == "[DONE]", text
    errors = [json.loads(e)["error"] for e in events[:-1] if '"error"' in e]
    assert len(errors) == 1, text
    return errors[0]


async def _ask(
    client: httpx.AsyncClient, case: Case, *, stream: bool, session: str
) -> tuple[int, dict[str, Any], float]:
    body = {
        "model": f"beamclaw/{case.agent}",
        "stream": stream,
        "messages": [{"role": "user", "content": f"fault:{case.name}"}],
    }
    started = time.monotonic()
    r = await client.post("/v1/chat/completions", headers={"X-Session-Id": session}, json=body)
    took = time.monotonic() - started
    if stream:
        assert r.status_code == 200, r.text
        return 200, _sse_error(r.text), took
    return r.status_code, r.json()["error"], took


def _problems(
    case: Case, stream: bool, status: int, error: dict[str, Any], took: float, attempts: int
) -> list[str]:
    """What is wrong with the answer to ``case`` (empty when it is the documented one)."""
    label = f"{case.name} stream={stream}: {status} {error} in {took:.1f} s"
    wanted_type = "rate_limit_error" if case.status == 429 else "api_error"
    return [
        f"{label}: {what}"
        for what, bad in (
            (f"status is not {case.status}", status != (200 if stream else case.status)),
            (f"type is not {wanted_type}", error.get("type") != wanted_type),
            (f"code is not {case.code}", error.get("code") != case.code),
            ("took 15 s or more", took >= 15),
            # two attempts, the second after the upstream's Retry-After (1 s)
            ("not retried once", case.name == "rate_limit" and attempts != 2),
            ("Retry-After not honoured", case.name == "rate_limit" and took < 0.9),
        )
        if bad
    ]


async def _settled(read: Any, baseline: int, slack: int, what: str) -> int:
    """Poll ``read`` up to 10 s until it is within ``slack`` of ``baseline``."""
    deadline = time.monotonic() + 10
    while True:
        value = int(await read())
        if value <= baseline + slack or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.2)


async def test_every_upstream_fault_gives_the_documented_error_and_leaks_nothing(
    tmp_path: Path, blackhole: int
) -> None:
    async with FakeOpenAIServer([_fault_of], repeat_last=True) as fake:
        port = free_port()
        gw = GatewayProcess(tmp_path / "gw", _config(fake.base_url, port, blackhole), port)
        (gw.home / "agents" / "dead").mkdir(parents=True)  # an agent exists by its workspace
        await gw.start()
        try:
            async with gw.client() as client:
                for stream in (False, True):  # warm both paths: pools, imports, caches
                    r = await client.post(
                        "/v1/chat/completions",
                        json={
                            "model": "beamclaw/default",
                            "stream": stream,
                            "messages": [{"role": "user", "content": "warm up"}],
                        },
                    )
                    assert r.status_code == 200, r.text
                await asyncio.sleep(0.5)
                fds0, tasks0 = gw.open_fds(), await gw.asyncio_tasks(client)
                seen: list[str] = []
                problems: list[str] = []
                for case in CASES:
                    for stream in (False, True):
                        if case.stream_only and not stream:
                            continue
                        session = f"fault-{case.name}-{'sse' if stream else 'json'}"
                        served = fake.served
                        status, error, took = await _ask(
                            client, case, stream=stream, session=session
                        )
                        label = f"{case.name} stream={stream}: {status} {error} {took:.1f}s"
                        seen.append(label)
                        problems += _problems(
                            case, stream, status, error, took, fake.served - served
                        )
                        # the same session (the dead agent's: another one) takes the next turn
                        after = session if case.agent == "default" else f"{session}-next"
                        ok = await client.post(
                            "/v1/chat/completions",
                            headers={"X-Session-Id": after},
                            json={
                                "model": "beamclaw/default",
                                "messages": [{"role": "user", "content": "still there?"}],
                            },
                        )
                        assert ok.status_code == 200, f"{label}: {ok.text}"
                        assert ok.json()["choices"][0]["message"]["content"] == "fine"
                fds = await _settled(lambda: asyncio.sleep(0, gw.open_fds()), fds0, 3, "fds")
                tasks = await _settled(lambda: gw.asyncio_tasks(client), tasks0, 2, "tasks")
                print("\n".join(seen))
                assert not problems, "\n".join(problems)
                print(f"fds {fds0} -> {fds}, asyncio tasks {tasks0} -> {tasks}")
                assert fds <= fds0 + 3, f"file descriptors leaked: {fds0} -> {fds}"
                assert tasks <= tasks0 + 2, f"asyncio tasks leaked: {tasks0} -> {tasks}"
        finally:
            gw.stop()
