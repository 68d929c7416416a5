"""The gateway's app answers its probes before the API is built (app.py): the probes
answer as the API's routes do, any other request (and the OpenAPI document) gets the whole
API, and a warm-up builds it off the event loop."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from beamclaw_core.testing import ScriptedProvider
from beamclaw_gateway import GatewayRuntime, create_app
from beamclaw_gateway.app import GatewayApp
from beamclaw_gateway.testing import serve_app
from beamclaw_obs import Secret

from .conftest import gateway_config

TOKEN = "probe-token"


@pytest.fixture
async def runtime(
    beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[GatewayRuntime]:
    monkeypatch.setenv("BC_TEST_PROBE_TOKEN", TOKEN)
    config = gateway_config()
    config.gateway.http.token = Secret(env="BC_TEST_PROBE_TOKEN")
    config.gateway.http.metrics_public = False
    config.scheduler.enabled = True  # every group documented and answering
    rt = GatewayRuntime(config)
    await rt.start()
    yield rt
    await rt.stop()


def client(app: GatewayApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


PROBES = (
    ("/ready", {}),
    ("/metrics", {}),  # 401: metrics need the token here
    ("/metrics", {"Authorization": f"Bearer {TOKEN}"}),
)


async def probe_answers(app: GatewayApp) -> list[tuple[int, str, Any]]:
    """Status, content type and body of each probe (the parts that do not change)."""
    answers: list[tuple[int, str, Any]] = []
    async with client(app) as c:
        for path, headers in PROBES:
            r = await c.get(path, headers=headers)
            assert r.headers["x-request-id"]
            body = r.json() if r.headers["content-type"] == "application/json" else "text"
            answers.append((r.status_code, r.headers["content-type"], body))
        health = (await c.get("/health")).json()
        answers.append((200, "health", sorted(health)))
    return answers


async def test_the_probes_answer_before_the_api_as_the_api_does(runtime: GatewayRuntime) -> None:
    early = create_app(runtime)
    before = await probe_answers(early)
    assert not early.built
    assert before[0] == (200, "application/json", {"ready": True})
    assert before[1][0] == 401 and before[1][2]["error"]["code"] == "invalid_api_key"
    assert before[2][:2] == (200, "text/plain; version=0.0.4; charset=utf-8")
    built = create_app(runtime)
    built.api()
    assert await probe_answers(built) == before


async def test_any_other_request_builds_the_api(runtime: GatewayRuntime) -> None:
    app = create_app(runtime)
    async with client(app) as c:
        assert (await c.head("/ready")).status_code == 405  # only GET is a probe's
        assert app.built
        r = await c.get("/v1/models", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200 and r.json()["object"] == "list"
    app = create_app(runtime)
    async with client(app) as c:
        r = await c.get("/nothing-here")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


async def test_a_websocket_first_builds_the_api(beamclaw_home: Path) -> None:
    """A ``/ws`` handshake is not a probe: it gets the API, built on the spot."""
    runtime = GatewayRuntime(gateway_config(), provider_factory=lambda _a: ScriptedProvider([]))
    app = create_app(runtime)
    async with serve_app(app) as port, websockets.connect(f"ws://127.0.0.1:{port}/ws") as ws:
        assert json.loads(await ws.recv())["type"] == "authenticated"
        assert app.built


async def openapi_after(app: GatewayApp, *first: str) -> dict[str, Any]:
    async with client(app) as c:
        for path in first:
            await c.get(path)
        r = await c.get("/openapi.json")
        assert r.status_code == 200
        doc: dict[str, Any] = r.json()
        return doc


async def test_the_openapi_document_is_whole_whatever_came_first(
    runtime: GatewayRuntime,
) -> None:
    first = await openapi_after(create_app(runtime))
    after_probes = await openapi_after(create_app(runtime), "/ready", "/health", "/metrics")
    assert first == after_probes
    assert {"/health", "/ready", "/metrics", "/v1/chat/completions", "/api/sessions"} <= set(
        first["paths"]
    )
    assert "ErrorResponse" in first["components"]["schemas"]


async def test_warming_builds_the_api_off_the_loop(runtime: GatewayRuntime) -> None:
    app = create_app(runtime)
    then: list[bool] = []
    app.warm(then=lambda: then.append(app.built))  # the next warm-up, once built
    async with client(app) as c:
        # a request arriving while the worker thread builds waits for it
        r = await c.get("/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200
    assert app.built and then == [True]
