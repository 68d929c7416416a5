"""``kill -9`` of the real gateway at random points of tool-using, streaming and scheduled
turns, then a restart, over and over (issue 24, faults item 1).

Each iteration starts ``beamclaw serve`` on the same home and database, checks what the
last kill left, then sends a tool-using turn (``bash`` that sleeps) and a streaming turn,
each with an ``Idempotency-Key``, and creates a one-shot job due within two seconds that
delivers to an outbound webhook; after a random delay the process gets SIGKILL. After
every restart:

* every session's history is provider-valid (each tool call answered once, in order);
* every question the model was asked is stored (the model never sees a question a kill
  can still lose);
* nothing an earlier read showed is lost or changed, and every answer a client received
  is in its session;
* every idempotency key of the killed requests settles: the retry gets a 200 (replayed,
  with the same content, when the client had the answer already), and a second retry is
  a replay — no key stuck, no reply produced twice;
* no job is lost or fires twice (``fire_count`` at most 1, its prompt once in its
  session), every webhook delivery carries the fire's delivery id (``X-Beamclaw-Delivery``),
  at most one id per job, and in the end every job fired and its answer was delivered
  exactly once when its turn committed one (modulo a repeat under the same id: a kill
  between the POST and its ``sent`` mark; the receiver dedupes on the id), never when
  it did not;
* ``PRAGMA integrity_check`` is ``ok`` after each kill (SQLite).

The kill points come from a seeded RNG (``BEAMCLAW_FAULT_SEED``; printed); the number of
iterations from ``BEAMCLAW_FAULT_ITERATIONS`` (2 here, 50 in ``make faults``; PostgreSQL
runs a tenth of them, at least one).
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from beamclaw_core.testing import (
    FakeOpenAIServer,
    FakeReply,
    FakeStep,
    FakeToolCall,
    RecordedRequest,
)

from .gateway_process import GatewayProcess, base_config, free_port
from .history_checks import lost_messages, provider_problems
from .knobs import ITERATIONS, SEED

pytestmark = [pytest.mark.faults, pytest.mark.slow]

LEASE = 1.0
HOOK_SECRET = "fault-suite-secret"


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _model(request: RecordedRequest) -> FakeStep:
    """Tool-using for ``tool:`` messages, a slow token stream for ``stream:`` ones, and an
    answer naming the last user message for everything else (scheduled prompts)."""
    messages: list[dict[str, Any]] = (request.body or {}).get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    asked = _text(users[-1]) if users else ""
    if messages and messages[-1].get("role") == "tool":
        return FakeReply(f"done: {asked}")
    if "tool:" in asked:
        call = FakeToolCall(
            "bash", {"command": "sleep 0.4; echo ok"}, id=f"call_{uuid.uuid4().hex}"
        )
        return FakeReply("Running it.", tool_calls=(call,))
    if "stream:" in asked:
        return FakeReply(tokens=tuple(f"{asked} part {i}. " for i in range(15)), delay=0.04)
    return FakeReply(f"answer: {asked}")


class HookReceiver:
    """The outbound webhook's far end: records every delivery's text and delivery id."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.ids: list[str | None] = []
        self._runner: web.AppRunner | None = None
        self.port = free_port()

    async def _hook(self, request: web.Request) -> web.Response:
        self.texts.append(str((await request.json()).get("text", "")))
        self.ids.append(request.headers.get("X-Beamclaw-Delivery"))
        return web.Response(status=204)

    async def __aenter__(self) -> HookReceiver:
        app = web.Application()
        app.router.add_post("/hook", self._hook)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@dataclass
class Sent:
    """One ``/v1`` request of an iteration, and what its client saw before the kill."""

    key: str
    session: str
    content: str
    stream: bool
    answer: str | None = None

    @property
    def body(self) -> dict[str, Any]:
        return {
            "model": "beamclaw/default",
            "stream": self.stream,
            "messages": [{"role": "user", "content": self.content}],
        }


def _sse_content(text: str) -> str | None:
    """The streamed content, or None unless the stream ended cleanly with ``[DONE]``."""
    events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    if not events or events[-1] != "[DONE]":
        return None
    parts: list[str] = []
    for raw in events[:-1]:
        event = json.loads(raw)
        if "error" in event:
            return None
        for choice in event.get("choices", []):
            parts.append(choice.get("delta", {}).get("content") or "")
    return "".join(parts)


async def _post(client: httpx.AsyncClient, sent: Sent) -> tuple[int, str | None, bool, str]:
    """Status, answer content (None when failed), replayed?, raw text."""
    r = await client.post(
        "/v1/chat/completions",
        headers={"X-Session-Id": sent.session, "Idempotency-Key": sent.key},
        json=sent.body,
    )
    replayed = r.headers.get("idempotent-replayed") == "true"
    if r.status_code != 200:
        return r.status_code, None, replayed, r.text
    if sent.stream:
        return 200, _sse_content(r.text), replayed, r.text
    return 200, r.json()["choices"][0]["message"]["content"], replayed, r.text


async def _send(client: httpx.AsyncClient, sent: Sent) -> None:
    try:
        status, content, _, _ = await _post(client, sent)
    except httpx.TransportError:
        return  # killed before the answer
    if status == 200:
        sent.answer = content


async def _settle(client: httpx.AsyncClient, sent: Sent) -> list[str]:
    """Retry a killed request's key until it is no longer in progress; then retry again."""
    deadline = time.monotonic() + 30
    while True:
        status, content, replayed, raw = await _post(client, sent)
        if status != 409 or "idempotency_in_progress" not in raw or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.3)
    label = f"key {sent.key}"
    if status != 200 or content is None:
        return [f"{label}: stuck or failed after the restart: {status} {raw[:300]}"]
    problems: list[str] = []
    if sent.answer is not None and not (replayed and content == sent.answer):
        problems.append(f"{label}: answered before the kill, yet not replayed as it was")
    status2, content2, replayed2, raw2 = await _post(client, sent)
    if not (status2 == 200 and replayed2 and content2 == content):
        problems.append(f"{label}: a second retry was not a replay: {status2} {raw2[:300]}")
    return problems


async def _sessions(client: httpx.AsyncClient) -> dict[str, list[dict[str, Any]]]:
    listed = (await client.get("/api/sessions")).json()["sessions"]
    out: dict[str, list[dict[str, Any]]] = {}
    for s in listed:
        r = await client.get(f"/api/sessions/{s['session_id']}")
        assert r.status_code == 200, r.text
        out[s["session_id"]] = r.json()["messages"]
    return out


async def _jobs(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    return {j["id"]: j for j in (await client.get("/api/schedules")).json()["schedules"]}


def _job_problems(
    jobs: dict[str, dict[str, Any]],
    created: dict[str, str],
    sessions: dict[str, list[dict[str, Any]]],
    hook: HookReceiver,
    *,
    final: bool,
) -> list[str]:
    problems: list[str] = []
    if None in hook.ids:
        problems.append("a webhook delivery came without its delivery id")
    for job_id, prompt in created.items():
        job = jobs.get(job_id)
        if job is None:
            problems.append(f"job {job_id} ({prompt}) lost")
            continue
        asked = [
            m
            for history in sessions.values()
            for m in history
            if m["role"] == "user" and prompt in _text(m)
        ]
        ids = {i for t, i in zip(hook.texts, hook.ids, strict=True) if prompt in t}
        if job["fire_count"] > 1 or len(asked) > 1 or len(ids) > 1:
            problems.append(
                f"job {prompt} fired twice: fire_count {job['fire_count']}, "
                f"{len(asked)} prompts, deliveries under {len(ids)} ids"
            )
        if final and (job["fire_count"] != 1 or job["status"] != "completed"):
            problems.append(f"job {prompt} never fired: {job}")
        if final and len(ids) != int(_answered(sessions, prompt)):
            problems.append(
                f"job {prompt}: answered in its session: {_answered(sessions, prompt)}, "
                f"delivered under {len(ids)} ids"
            )
    return problems


def _unstored_questions(
    requests: list[RecordedRequest], sessions: dict[str, list[dict[str, Any]]]
) -> list[str]:
    """The questions (each request's last user message) no session stores."""
    stored = {_text(m) for history in sessions.values() for m in history if m["role"] == "user"}
    problems: list[str] = []
    for request in requests:
        users = [m for m in (request.body or {}).get("messages", []) if m.get("role") == "user"]
        if users and (asked := _text(users[-1])) not in stored:
            problems.append(f"the model was asked {asked!r}, which no session stores")
    return problems


def _answered(sessions: dict[str, list[dict[str, Any]]], prompt: str) -> bool:
    """The job's turn committed an answer (the fake model's answers name the prompt)."""
    return any(
        m["role"] == "assistant" and prompt in _text(m)
        for history in sessions.values()
        for m in history
    )


def _config(base_url: str, port: int, hook_port: int) -> str:
    return (
        base_config(base_url, port)
        + f"""
[scheduler]
enabled = true
min_interval_seconds = 1
tick_seconds = 0.2
[gateway.api]
idempotency_lease_seconds = {LEASE}
[gateway.outbound_webhooks.ops]
url = "http://127.0.0.1:{hook_port}/hook"
secret = {{ env = "FAULT_HOOK_SECRET" }}
"""
    )


def _integrity(gw: GatewayProcess, kind: str) -> None:
    if kind != "sqlite":
        return
    with sqlite3.connect(gw.home / "beamclaw.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> tuple[str, str | None]:
    """The kind, and the URL the gateway gets (None: its own SQLite file)."""
    if request.param == "sqlite":
        return "sqlite", None
    return "postgres", str(request.getfixturevalue("postgres_url"))


@pytest.mark.timeout(120 + 40 * ITERATIONS)
async def test_kill_9_at_random_points_loses_nothing_and_repeats_nothing(
    tmp_path: Path, database: tuple[str, str | None]
) -> None:
    kind, url = database
    seed = SEED or random.SystemRandom().randrange(1, 2**31)
    rng = random.Random(seed)
    iterations = ITERATIONS if kind == "sqlite" else max(1, ITERATIONS // 10)
    print(f"\nkill -9 suite on {kind}: {iterations} iterations, seed {seed}")
    async with FakeOpenAIServer([_model], repeat_last=True) as fake, HookReceiver() as hook:
        port = free_port()
        gw = GatewayProcess(
            tmp_path / "gw",
            _config(fake.base_url, port, hook.port),
            port,
            database_url=url,
            env={"FAULT_HOOK_SECRET": HOOK_SECRET},
        )
        snapshot: dict[str, list[dict[str, Any]]] = {}
        killed: list[Sent] = []
        jobs_created: dict[str, str] = {}
        kill_points: list[float] = []
        try:
            async with gw.client() as client:
                for i in range(iterations + 1):
                    started = time.monotonic()
                    await gw.start()
                    print(f"start {i}: ready in {time.monotonic() - started:.1f} s")
                    final = i == iterations
                    problems: list[str] = []
                    for sent in killed:
                        problems += await _settle(client, sent)
                    if final:  # every job's time has come: wait until each one ran
                        deadline = time.monotonic() + 30  # and its answer was delivered
                        while time.monotonic() < deadline:
                            jobs = await _jobs(client)
                            sessions = await _sessions(client)
                            if all(
                                jobs.get(j, {}).get("status") == "completed" for j in jobs_created
                            ) and all(
                                not _answered(sessions, p) or any(p in t for t in hook.texts)
                                for p in jobs_created.values()
                            ):
                                break
                            await asyncio.sleep(0.2)
                        await asyncio.sleep(1.0)  # a second fire or delivery would show
                    sessions = await _sessions(client)
                    for sid, history in sessions.items():
                        problems += [f"{sid}: {p}" for p in provider_problems(history)]
                        problems += [
                            f"{sid}: {p}" for p in lost_messages(snapshot.get(sid, []), history)
                        ]
                    for sent in killed:
                        # a turn's answer is its assistant messages' texts, joined
                        stored = "\n\n".join(
                            _text(m)
                            for m in sessions.get(sent.session, [])
                            if m["role"] == "assistant" and _text(m)
                        )
                        if sent.answer is not None and sent.answer not in stored:
                            problems.append(
                                f"{sent.key}: the answer its client got is not stored: "
                                f"{sent.answer!r} not in {stored}"
                            )
                    problems += _job_problems(
                        await _jobs(client), jobs_created, sessions, hook, final=final
                    )
                    problems += _unstored_questions(fake.requests, sessions)
                    assert not problems, f"after kill {i} (seed {seed}):\n" + "\n".join(problems)
                    snapshot = sessions
                    if final:
                        break

                    killed = [
                        Sent(f"tool-{i}", "kill9-tool", f"tool: run {i}", stream=False),
                        Sent(f"stream-{i}", "kill9-stream", f"stream: tell {i}", stream=True),
                    ]
                    tasks = [asyncio.create_task(_send(client, s)) for s in killed]
                    due = datetime.now(UTC) + timedelta(seconds=rng.uniform(0.2, 2.0))
                    prompt = f"job-{i}-{uuid.uuid4().hex[:6]}"
                    r = await client.post(
                        "/api/schedules",
                        json={"prompt": prompt, "at": due.isoformat(), "deliver_to": "webhook:ops"},
                    )
                    assert r.status_code == 201, r.text
                    jobs_created[r.json()["id"]] = prompt
                    point = rng.uniform(0.05, 2.5)
                    kill_points.append(point)
                    await asyncio.sleep(point)
                    gw.kill9()
                    await asyncio.gather(*tasks)
                    _integrity(gw, kind)
                print(
                    f"{iterations} kills at {[round(p, 2) for p in kill_points]} s; "
                    f"{fake.served} upstream requests; "
                    f"{len(hook.texts)} webhook deliveries under {len(set(hook.ids))} ids "
                    f"for {len(jobs_created)} jobs"
                )
        finally:
            gw.stop()
        _integrity(gw, kind)
