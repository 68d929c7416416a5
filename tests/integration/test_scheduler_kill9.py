"""``kill -9`` of a real gateway process holding scheduled jobs, then a restart: no job is
lost, and a one-shot job whose time came while the gateway was dead fires once after the
restart, through the fake OpenAI server over HTTP (later than ``missed_grace_seconds`` it
would follow ``missed_fires``: tested with an injected clock in the scheduler's tests)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from beamclaw_core.testing import FakeOpenAIServer, FakeReply

from .test_gateway_kill9 import _config, _free_port, _start, _stop, _wait_ready

SCHEDULER = """
[scheduler]
enabled = true
min_interval_seconds = 1
tick_seconds = 0.2
"""


async def test_jobs_survive_kill_9_and_a_missed_one_fires_once(tmp_path: Path) -> None:
    port = _free_port()
    async with FakeOpenAIServer([FakeReply("reminded")], repeat_last=True) as fake:
        env = {
            **os.environ,
            "BEAMCLAW_HOME": str(tmp_path / "home"),
            "BEAMCLAW_CONFIG": str(
                _config(tmp_path / "beamclaw.toml", fake.base_url, port, SCHEDULER)
            ),
        }
        log = tmp_path / "gateway.log"
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            first = _start(env, log)
            try:
                await _wait_ready(client, first, log)
                soon = (datetime.now(UTC) + timedelta(seconds=3)).isoformat()
                bodies = [
                    {"prompt": "call the dentist", "at": soon},
                    {"prompt": "weekly review", "cron": "0 9 * * 1", "timezone": "Europe/Berlin"},
                    {"prompt": "hourly check", "every_seconds": 3600},
                ]
                created = []
                for body in bodies:
                    r = await client.post("/api/schedules", json=body)
                    assert r.status_code == 201, r.text
                    created.append(r.json())
                first.send_signal(signal.SIGKILL)
                first.wait(10)
            finally:
                if first.poll() is None:
                    first.kill()
            assert fake.requests == []
            await asyncio.sleep(4)  # the one-shot's time passes while nothing runs

            second = _start(env, log)
            try:
                await _wait_ready(client, second, log)
                deadline = time.monotonic() + 20
                while True:
                    jobs = (await client.get("/api/schedules")).json()["schedules"]
                    by_id = {j["id"]: j for j in jobs}
                    if by_id[created[0]["id"]]["status"] == "completed":
                        break
                    assert time.monotonic() < deadline, jobs
                    await asyncio.sleep(0.2)
                await asyncio.sleep(1.0)  # a second fire would show by now
                jobs = (await client.get("/api/schedules")).json()["schedules"]
            finally:
                _stop(second)
    assert {j["id"] for j in jobs} == {c["id"] for c in created}, "no job lost"
    by_id = {j["id"]: j for j in jobs}
    once = by_id[created[0]["id"]]
    assert once["fire_count"] == 1 and once["status"] == "completed"
    for other in created[1:]:
        kept = by_id[other["id"]]
        assert kept["status"] == "active" and kept["fire_count"] == 0
        assert kept["next_run_at"] == other["next_run_at"]
    prompts = [json.dumps(r.body) for r in fake.requests]
    assert sum("call the dentist" in p for p in prompts) == 1
