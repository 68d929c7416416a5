"""The route groups after the probes are built on first use (deferred_routes.py): the
probes answer without them, any other request (and the OpenAPI document) sees every group,
and the app then routes and documents as if it had been built with all of them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from importlib import import_module
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, APIWebSocketRoute

from beamclaw_gateway import GatewayRuntime, create_app
from beamclaw_gateway.app import ROUTE_GROUPS
from beamclaw_gateway.deferred_routes import DeferredRoutes

from .conftest import gateway_config


@pytest.fixture
async def runtime(beamclaw_home: Path) -> AsyncIterator[GatewayRuntime]:
    config = gateway_config()
    config.scheduler.enabled = True  # every group documented and answering
    rt = GatewayRuntime(config)
    await rt.start()
    yield rt
    await rt.stop()


def client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def deferred(app: FastAPI) -> DeferredRoutes:
    routes: DeferredRoutes = app.state.routes
    return routes


def group_paths() -> list[str]:
    """Every path the deferred groups serve, in routing order."""
    paths: list[str] = []
    for name in ROUTE_GROUPS:
        for route in import_module(name).router.routes:
            if isinstance(route, APIRoute | APIWebSocketRoute):
                paths.append(route.path)
    return paths


async def openapi_after(app: FastAPI, *first: str) -> dict[str, Any]:
    async with client(app) as c:
        for path in first:
            await c.get(path)
        r = await c.get("/openapi.json")
        assert r.status_code == 200
        doc: dict[str, Any] = r.json()
        return doc


async def test_the_probes_answer_without_the_groups(runtime: GatewayRuntime) -> None:
    app = create_app(runtime)
    async with client(app) as c:
        assert (await c.get("/ready")).json() == {"ready": True}
        assert (await c.get("/health")).json()["status"] == "up"
        assert (await c.get("/metrics")).status_code == 200
    assert not deferred(app).included


async def test_any_other_request_routes_through_every_group(runtime: GatewayRuntime) -> None:
    app = create_app(runtime)
    async with client(app) as c:
        r = await c.get("/v1/models")
        assert r.status_code == 200
        assert r.json()["object"] == "list"
        assert deferred(app).included
        r = await c.get("/no/such/route")
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "not_found"


async def test_an_unknown_path_first_still_answers_404(runtime: GatewayRuntime) -> None:
    """A 404 needs every group: the path might have been one of theirs."""
    async with client(create_app(runtime)) as c:
        assert (await c.get("/api/sessions")).status_code == 200
    async with client(create_app(runtime)) as c:
        r = await c.get("/nothing-here")
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "not_found"


async def test_the_openapi_document_is_whole_whatever_came_first(
    runtime: GatewayRuntime,
) -> None:
    first = await openapi_after(create_app(runtime))
    after_probe = await openapi_after(create_app(runtime), "/ready", "/health")
    after_request = await openapi_after(create_app(runtime), "/v1/models")
    assert first == after_probe == after_request
    documented = set(first["paths"])
    assert {"/health", "/ready", "/metrics"} <= documented
    ws_and_ui = {"/ws", "/ui", "/ui/", "/ui/{name}"}  # not HTTP operations, or hidden
    assert set(group_paths()) - ws_and_ui <= documented
    assert "ErrorResponse" in first["components"]["schemas"]


async def test_warming_includes_the_groups_before_any_request(runtime: GatewayRuntime) -> None:
    app = create_app(runtime)
    routes = deferred(app)
    routes.warm()
    async with client(app) as c:
        # a request arriving while the worker thread imports waits for it
        assert (await c.get("/api/sessions")).status_code == 200
    await routes.aclose()
    assert routes.included


_PROBES_ONLY = """
import json, sys
import beamclaw_gateway.server
from beamclaw_gateway.app import ROUTE_GROUPS
later = [m for m in ROUTE_GROUPS if m != "beamclaw_gateway.ws"]  # its hub is a service
later += ["beamclaw_gateway.openai_models", "beamclaw_gateway.a2a"]
print(json.dumps(sorted(m for m in later if m in sys.modules)))
"""


def test_the_server_imports_no_route_group() -> None:
    """What the probes do not need stays out of the start-up: the route groups' modules and
    what only they use (the OpenAI models, A2A); ``ws`` is there for its channel hub."""
    r = subprocess.run(
        [sys.executable, "-c", _PROBES_ONLY],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []
