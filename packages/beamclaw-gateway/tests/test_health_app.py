"""/health, /ready and /metrics through the real app and runtime (ASGI, in-process)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from beamclaw_gateway import BeamclawConfig, GatewayRuntime, create_app, load_config
from beamclaw_memory import expected_heads
from beamclaw_obs import EventType, emit, get_emitter


@pytest.fixture
async def runtime(beamclaw_home: Path) -> AsyncIterator[GatewayRuntime]:
    rt = GatewayRuntime(load_config().settings)
    await rt.start()
    yield rt
    await rt.stop()


@pytest.fixture
async def client(runtime: GatewayRuntime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


async def test_health_reports_version_uptime_components(client: httpx.AsyncClient) -> None:
    r = await client.get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "up"
    assert body["version"] == "0.1.0"
    assert body["uptime_seconds"] >= 0
    db = body["components"]["database"]
    assert db["status"] == "up"
    assert db["url"].startswith("sqlite:///")
    assert set(db["migrations"]) == expected_heads()


async def test_health_reports_no_component_that_does_not_exist(
    client: httpx.AsyncClient,
) -> None:
    components = (await client.get("/health")).json()["components"]
    assert "scheduler" not in components  # nothing runs scheduled jobs yet
    assert "sandbox" not in components
    assert {"database", "channels", "rate_limit"} <= set(components)


async def test_ready_only_when_started(client: httpx.AsyncClient, runtime: GatewayRuntime) -> None:
    assert (await client.get("/ready")).json() == {"ready": True}
    await runtime.stop()
    r = await client.get("/ready")
    assert r.status_code == 503
    assert r.json() == {"ready": False}


async def test_metrics_is_prometheus_text_and_counts_events(client: httpx.AsyncClient) -> None:
    emit(EventType.TOOL_CALL_RESULT, tool_name="think", success=True, duration_ms=1)
    get_emitter().flush()
    r = await client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert "# TYPE beamclaw_tool_calls_total counter" in r.text
    assert 'beamclaw_tool_calls_total{success="True",tool="think"} 1.0' in r.text


async def test_metrics_counts_the_live_asyncio_tasks(client: httpx.AsyncClient) -> None:
    r = await client.get("/metrics")
    line = next(x for x in r.text.splitlines() if x.startswith("beamclaw_process_asyncio_tasks "))
    assert int(line.split()[1]) >= 1  # at least the task serving this request


async def test_metrics_can_be_disabled(beamclaw_home: Path) -> None:
    config = BeamclawConfig()
    config.obs.metrics_enabled = False
    runtime = GatewayRuntime(config)
    await runtime.start()
    try:
        transport = httpx.ASGITransport(app=create_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            response = await c.get("/metrics")
            assert response.status_code == 404
            assert response.json()["error"]["code"] == "metrics_disabled"
            assert response.headers["x-request-id"]
    finally:
        await runtime.stop()


@pytest.mark.postgres
async def test_runtime_migrates_on_postgres(
    beamclaw_home: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BEAMCLAW_DATABASE_URL", postgres_url)
    runtime = GatewayRuntime(load_config().settings)
    await runtime.start()
    try:
        assert runtime.database is not None and not runtime.database.is_sqlite
        assert runtime.health.ready()
    finally:
        await runtime.stop()
