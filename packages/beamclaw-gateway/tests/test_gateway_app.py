"""The gateway's app answers its probes before the API is built (app.py): the probes
answer as the API's routes do, ``/v1`` and ``/ws`` get the front API, answering as the
whole API does, any other request (and the OpenAPI document) gets the whole API, and a
warm-up builds the front API, then the whole one, off the event loop."""

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


async def test_a_websocket_first_builds_the_front_api(beamclaw_home: Path) -> None:
    """A ``/ws`` handshake is not a probe: it gets the front API, built on the spot."""
    runtime = GatewayRuntime(gateway_config(), provider_factory=lambda _a: ScriptedProvider([]))
    app = create_app(runtime)
    async with serve_app(app) as port, websockets.connect(f"ws://127.0.0.1:{port}/ws") as ws:
        assert json.loads(await ws.recv())["type"] == "authenticated"
        assert app.front_built and not app.built


FRONT_REQUESTS = (
    ("GET", "/v1/models", {"Authorization": f"Bearer {TOKEN}"}, None),
    ("GET", "/v1/models", {}, None),  # 401
    ("GET", "/v1/nothing-here", {"Authorization": f"Bearer {TOKEN}"}, None),  # 404
    ("DELETE", "/v1/models", {"Authorization": f"Bearer {TOKEN}"}, None),  # 405
    ("POST", "/v1/chat/completions", {"Authorization": f"Bearer {TOKEN}"}, "{"),  # 400
    ("POST", "/v1/chat/completions", {"Authorization": f"Bearer {TOKEN}"}, '{"messages": 1}'),
    ("GET", "/v1", {}, None),  # 404
)


async def front_answers(app: GatewayApp) -> list[tuple[int, Any]]:
    answers: list[tuple[int, Any]] = []
    async with client(app) as c:
        for method, path, headers, body in FRONT_REQUESTS:
            r = await c.request(method, path, headers=headers, content=body)
            assert r.headers["x-request-id"]
            answers.append((r.status_code, r.json()))
    return answers


async def test_the_front_api_answers_its_paths_as_the_whole_api_does(
    runtime: GatewayRuntime,
) -> None:
    front = create_app(runtime)
    before = await front_answers(front)
    assert front.front_built and not front.built
    assert [status for status, _ in before] == [200, 401, 404, 405, 400, 400, 404]
    whole = create_app(runtime)
    whole.api()
    assert await front_answers(whole) == before
    async with client(front) as c:  # any other path builds the whole API
        r = await c.get("/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200 and front.built


def test_no_other_group_has_a_path_the_front_api_answers() -> None:
    """The front API answers ``/v1`` and ``/ws`` (app.py sends it those paths): every
    route of the whole API there is one of its routers'."""
    from fastapi.routing import APIRoute, APIWebSocketRoute

    from beamclaw_gateway.api import ROUTERS
    from beamclaw_gateway.api_front import FRONT_ROUTERS

    def paths(routers: tuple[Any, ...]) -> set[str]:
        return {
            route.path
            for router in routers
            for route in router.routes
            if isinstance(route, APIRoute | APIWebSocketRoute)
        }

    front = paths(FRONT_ROUTERS)
    assert "/v1/chat/completions" in front and "/ws" in front
    assert all(path == "/ws" or path.startswith("/v1/") for path in front)
    others = paths(tuple(r for r in ROUTERS if r not in FRONT_ROUTERS))
    assert not [p for p in others if p in ("/v1", "/ws") or p.startswith(("/v1/", "/ws/"))]


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


async def test_warming_answers_the_front_paths_before_the_whole_api_is_built(
    runtime: GatewayRuntime,
) -> None:
    app = create_app(runtime)
    app.warm()
    async with client(app) as c:
        r = await c.get("/v1/models", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200 and app.front_built
        r = await c.get("/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200 and app.built
