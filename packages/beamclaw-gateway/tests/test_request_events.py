"""Gateway obs events: one ``http_request`` per response (route template, status,
duration; refused requests too), ``auth_failed`` for a refused token, ``rate_limited``
for a 429."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_obs import Event, EventType, Secret
from beamclaw_obs.testing import EventRecorder, recording_events

from .conftest import gateway_config, live_gateway

TOKEN = "request-events-token"


@pytest.fixture(autouse=True)
def _token_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BC_TEST_EVENTS_TOKEN", TOKEN)


@pytest.fixture
def events() -> Iterator[EventRecorder]:
    with recording_events("request-events-test") as recorder:
        yield recorder


def _requests(events: EventRecorder) -> list[tuple[str, str, int]]:
    found: list[Event] = events.of(EventType.HTTP_REQUEST)
    return [(e.data["method"], e.data["route"], e.data["status"]) for e in found]


async def test_every_response_is_one_http_request_event(events: EventRecorder) -> None:
    config = gateway_config()
    config.gateway.http.token = Secret(env="BC_TEST_EVENTS_TOKEN")
    config.gateway.http.max_body_bytes = 1000
    async with (
        live_gateway(ScriptedProvider([Reply("hi")]), config) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        health = await c.get("/health", headers={"X-Request-Id": "req-42"})
        await c.get("/no/such/page")
        await c.get("/api/sessions/abc", headers={"Authorization": "Bearer wrong"})
        await c.get("/api/status")
        await c.post(
            "/v1/chat/completions",
            content=b"x" * 2000,
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        await c.get("/api/sessions/abc", headers={"Authorization": f"Bearer {TOKEN}"})
    seen = _requests(events)
    assert ("GET", "/health", 200) in seen
    assert ("GET", "unmatched", 404) in seen
    assert ("GET", "/api/sessions/{session_id}", 401) in seen
    assert ("GET", "/api/status", 401) in seen
    assert ("POST", "unmatched", 413) in seen  # refused before routing
    assert ("GET", "/api/sessions/{session_id}", 404) in seen
    assert health.headers["x-request-id"] == "req-42"
    assert "req-42" in [e.data["request_id"] for e in events.of(EventType.HTTP_REQUEST)]
    assert all(e.data["request_id"] for e in events.of(EventType.HTTP_REQUEST))
    durations = [e.data["duration_ms"] for e in events.of(EventType.HTTP_REQUEST)]
    assert all(d >= 0 for d in durations)
    reasons = sorted(e.data["reason"] for e in events.of(EventType.AUTH_FAILED))
    assert reasons == ["invalid", "missing"]
    assert all(e.data["credential"] == "gateway_token" for e in events.of(EventType.AUTH_FAILED))
    assert not any(TOKEN in str(e.data) or "wrong" in str(e.data) for e in events.events)


async def test_a_429_is_a_rate_limited_event(events: EventRecorder) -> None:
    config = gateway_config()
    config.gateway.rate_limit.per_loopback = "2/minute"  # the test client is on loopback
    async with (
        live_gateway(ScriptedProvider([Reply("hi")]), config) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        codes = [(await c.get("/v1/models")).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    [limited] = events.of(EventType.RATE_LIMITED)
    assert limited.data["by"] == "loopback"
    assert limited.data["retry_after"] > 0
    assert ("GET", "unmatched", 429) in _requests(events)  # refused before routing
