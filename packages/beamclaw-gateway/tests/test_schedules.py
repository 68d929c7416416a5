"""/api/schedules and the outbound webhook channel, in real time through a live gateway: a
job created over REST fires within seconds and its answer reaches a webhook test double
(an aiohttp server checking the signature); a deleted job stops; bad input is 422."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from beamclaw_core import ProviderSettings
from beamclaw_core.testing import FakeOpenAIServer, FakeReply, Reply, ScriptedProvider
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.settings import OutboundWebhookSettings
from beamclaw_obs import Secret

from .conftest import gateway_config, live_gateway

SECRET = "hook-secret"


@dataclass
class HookServer:
    """A webhook receiver: every delivery, and whether its signature was right."""

    url: str = ""
    status: int = 200
    received: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    delivery_ids: list[tuple[str | None, str | None]] = field(
        default_factory=list[tuple[str | None, str | None]]
    )
    bad_signatures: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        stamp = request.headers["X-Beamclaw-Timestamp"]
        expected = hmac.new(SECRET.encode(), stamp.encode() + b"." + body, hashlib.sha256)
        if request.headers["X-Beamclaw-Signature"] != "sha256=" + expected.hexdigest():
            self.bad_signatures += 1
        self.received.append(json.loads(body))
        self.delivery_ids.append(
            (request.headers.get("X-Beamclaw-Delivery"), request.headers.get("Idempotency-Key"))
        )
        self.arrived.set()
        return web.Response(status=self.status)


@pytest.fixture
async def hook() -> AsyncIterator[HookServer]:
    server = HookServer()
    app = web.Application()
    app.router.add_post("/hook", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    server.url = f"http://127.0.0.1:{port}/hook"
    yield server
    await runner.cleanup()


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BC_TEST_OUT_HOOK", SECRET)


def scheduler_config(hook_url: str = "http://127.0.0.1:9/none") -> BeamclawConfig:
    config = gateway_config()
    config.scheduler.enabled = True
    config.scheduler.min_interval_seconds = 1
    config.scheduler.tick_seconds = 0.1
    config.gateway.outbound_webhooks = {
        "hook": OutboundWebhookSettings(url=hook_url, secret=Secret(env="BC_TEST_OUT_HOOK"))
    }
    return config


async def _until(predicate: Any, seconds: float = 8.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached in time")


async def test_a_job_created_over_rest_fires_and_delivers_to_a_webhook(hook: HookServer) -> None:
    provider = ScriptedProvider([Reply("Time to stretch!")], repeat_last=True)
    async with (
        live_gateway(provider, scheduler_config(hook.url)) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        r = await c.post(
            "/api/schedules",
            json={
                "prompt": "remind me to stretch",
                "every_seconds": 1,
                "deliver_to": "webhook:hook",
            },
        )
        assert r.status_code == 201, r.text
        job = r.json()
        assert job["id"] and job["kind"] == "every" and job["status"] == "active"
        await asyncio.wait_for(hook.arrived.wait(), 8)
        listed = (await c.get("/api/schedules")).json()["schedules"]
        deleted = await c.delete(f"/api/schedules/{job['id']}")
        count_at_delete = len(hook.received)
        await asyncio.sleep(2.5)
        again = await c.delete(f"/api/schedules/{job['id']}")
        user_texts = [
            m.text for call in provider.calls for m in call.messages if m.role.value == "user"
        ]
    assert hook.received[0]["text"] == "Time to stretch!"
    assert hook.received[0]["target"] == "hook" and hook.bad_signatures == 0
    assert hook.delivery_ids[0] == (f"{job['id']}:1", f"{job['id']}:1"), "the fire's stable id"
    assert any("remind me to stretch" in t for t in user_texts)
    [row] = [s for s in listed if s["id"] == job["id"]]
    assert row["fire_count"] >= 1 and row["last_run_at"] is not None
    assert {
        "id",
        "prompt",
        "kind",
        "next_run_at",
        "last_run_at",
        "fire_count",
        "error_count",
        "status",
    } <= set(row)
    assert deleted.status_code == 204 and deleted.content == b""
    assert len(hook.received) <= count_at_delete + 1, (
        "a deleted job stops (one fire may be in flight)"
    )
    assert again.status_code == 404 and again.json()["error"]["code"] == "schedule_not_found"


async def test_pause_and_resume_over_rest(hook: HookServer) -> None:
    provider = ScriptedProvider([Reply("ok")], repeat_last=True)
    at = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    async with (
        live_gateway(provider, scheduler_config(hook.url)) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        job = (await c.post("/api/schedules", json={"prompt": "later", "at": at})).json()
        paused = await c.post(f"/api/schedules/{job['id']}/pause")
        resumed = await c.post(f"/api/schedules/{job['id']}/resume")
        unknown = await c.post("/api/schedules/nope/pause")
        got = await c.get(f"/api/schedules/{job['id']}")
    assert job["kind"] == "at" and job["deliver_to"] == "last", "no target: where they wrote last"
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"
    assert unknown.status_code == 404
    assert got.json()["next_run_at"] == datetime.fromisoformat(at).astimezone(UTC).isoformat()


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"prompt": "x"}, None),
        ({"prompt": "x", "every_seconds": 5, "cron": "* * * * *"}, "cron"),
        ({"prompt": "x", "cron": "61 * * * *"}, "cron"),
        ({"prompt": "x", "cron": "* * * *"}, "cron"),
        ({"prompt": "x", "cron": "0 0 30 2 *"}, "cron"),
        ({"prompt": "x", "every_seconds": 0}, "every_seconds"),
        ({"prompt": "x", "at": "2001-01-01T00:00:00+00:00"}, "at"),
        ({"prompt": "x", "at": "2999-01-01T00:00:00"}, "at"),
        ({"prompt": "x", "cron": "0 9 * * *", "timezone": "Mars/Olympus"}, "timezone"),
        ({"prompt": "x", "every_seconds": 5, "agent_id": "ghost"}, "agent_id"),
        ({"prompt": "x", "every_seconds": 5, "deliver_to": "pigeon:roof"}, "deliver_to"),
        ({"prompt": "x", "every_seconds": 5, "deliver_to": "webhook"}, "deliver_to"),
        ({"prompt": "x", "random_in": {"between": "9-5"}}, "random_in.between"),
        ({"prompt": "x", "every_seconds": 5, "colour": "red"}, "colour"),
    ],
)
async def test_invalid_schedules_are_422_never_500(body: dict[str, Any], param: str | None) -> None:
    config = scheduler_config()
    config.scheduler.min_interval_seconds = 1
    async with (
        live_gateway(ScriptedProvider([Reply("x")]), config) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        r = await c.post("/api/schedules", json=body)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["message"]
    if param is not None:
        assert param in (error["param"] or ""), error


async def test_an_interval_under_the_minimum_is_refused() -> None:
    config = scheduler_config()
    config.scheduler.min_interval_seconds = 60
    async with (
        live_gateway(ScriptedProvider([Reply("x")]), config) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        r = await c.post("/api/schedules", json={"prompt": "x", "every_seconds": 30})
    assert r.status_code == 422
    assert "at least 60" in r.json()["error"]["message"]


async def test_api_deliver_reaches_an_outbound_webhook(hook: HookServer) -> None:
    async with (
        live_gateway(ScriptedProvider([Reply("x")]), scheduler_config(hook.url)) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        ok = await c.post(
            "/api/deliver", json={"channel": "webhook", "target": "hook", "message": "hello"}
        )
        unknown = await c.post(
            "/api/deliver", json={"channel": "webhook", "target": "nope", "message": "hello"}
        )
    assert ok.status_code == 200 and ok.json() == {"delivered": 1}
    assert hook.received == [
        {
            "channel": "webhook",
            "target": "hook",
            "text": "hello",
            "sent_at": hook.received[0]["sent_at"],
        }
    ]
    assert hook.bad_signatures == 0
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_target"


async def test_the_routes_say_when_the_scheduler_is_off() -> None:
    async with (
        live_gateway(ScriptedProvider([Reply("x")])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        r = await c.get("/api/schedules")
    assert r.status_code == 503 and r.json()["error"]["code"] == "scheduler_disabled"


async def test_an_idle_heartbeat_makes_zero_upstream_calls(beamclaw_home: Path) -> None:
    from beamclaw_core.workspace import agent_dir

    async with FakeOpenAIServer([FakeReply("HEARTBEAT_OK")], repeat_last=True) as upstream:
        config = scheduler_config()
        config.core.providers = {
            "fake": ProviderSettings(kind="openai", base_url=upstream.base_url, model="m")
        }
        config.core.default_provider = "fake"
        config.scheduler.heartbeat.every_seconds = 1
        config.scheduler.heartbeat.model = "m-cheap"
        async with (
            live_gateway(None, config) as gw,
            httpx.AsyncClient(base_url=gw.base_url) as c,
        ):
            await asyncio.sleep(3.0)
            idle_requests = len(upstream.requests)
            health = (await c.get("/health")).json()
            heartbeat = agent_dir("default", beamclaw_home) / "HEARTBEAT.md"
            heartbeat.write_text(heartbeat.read_text() + "- check the build\n")
            await _until(lambda: len(upstream.requests) >= 1)
            services = gw.app.state.services
            await _until(
                lambda: services.scheduler.heartbeats.records["default"].last_result == "quiet"
            )
            sessions = (await c.get("/api/sessions")).json()["sessions"]
    assert idle_requests == 0, "HEARTBEAT.md with no task line: no LLM call at all"
    scheduler = health["components"]["scheduler"]
    assert scheduler["status"] == "up" and "next fire" in scheduler["detail"]
    assert scheduler["heartbeats"]["default"]["last_skip"] == "no_tasks"
    assert "check the build" in json.dumps(upstream.requests[0].body)
    assert upstream.requests[0].body["model"] == "m-cheap", "the heartbeat's own model"
    assert [s for s in sessions if s["session_id"].startswith("heartbeat-")] == []
