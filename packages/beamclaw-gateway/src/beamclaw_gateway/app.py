"""The FastAPI application factory. Routes live in ``routes_*`` modules.

Request path, outermost first: request context (``X-Request-Id``, log context, JSON 500
for an escaped exception) → the ``http_request`` obs event (request_events.py) →
body-size limit (413) → rate limit (429, HTTP and WS handshakes) → the deferred route
groups included (any request but a probe's, once: deferred_routes.py) → routing →
bearer-token dependency (401) → handler. Every error response, whatever produced it
(404/405 routing, 422 validation, an ``HTTPException``, a crash), has the OpenAI error
shape.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from beamclaw_gateway._version import __version__
from beamclaw_gateway.deferred_routes import DeferredRoutes, DeferredRoutesMiddleware
from beamclaw_gateway.errors import ApiError, GatewayNotStartedError
from beamclaw_gateway.middleware import BodyLimitMiddleware, RateLimitMiddleware
from beamclaw_gateway.request_context import RequestContextMiddleware
from beamclaw_gateway.request_events import RequestEventsMiddleware
from beamclaw_gateway.routes_health import router as health_router
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

ROUTE_GROUPS: tuple[str, ...] = (
    "beamclaw_gateway.routes_openai",
    "beamclaw_gateway.routes_api",
    "beamclaw_gateway.routes_approvals",
    "beamclaw_gateway.routes_usage",
    "beamclaw_gateway.routes_schedules",
    "beamclaw_gateway.routes_tasks",
    "beamclaw_gateway.routes_identities",
    "beamclaw_gateway.routes_pairing",
    "beamclaw_gateway.ws",
    "beamclaw_gateway.routes_telegram",  # before /webhook/{source}: "telegram" is reserved
    "beamclaw_gateway.routes_webhooks",
    "beamclaw_gateway.routes_a2a",
    "beamclaw_gateway.routes_integrations",
    "beamclaw_gateway.ui",
)
"""The modules of the route groups after the probes, in routing order (each exposes
``router``); the app includes them on first use (:mod:`.deferred_routes`)."""


def _api_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body(), exc.status, headers=exc.headers)


def _not_started(_request: Request, exc: Exception) -> Response:
    error = ApiError(503, str(exc), type="api_error", code="not_ready")
    return JSONResponse(error.body(), 503)


def _describe(exc: RequestValidationError) -> tuple[str, str | None]:
    errors = exc.errors()
    if not errors:
        return "invalid request", None
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "the request body is not valid JSON", None
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body",)]
    param = ".".join(loc) or None
    return f"{param or 'request'}: {first.get('msg', 'invalid')}", param


def _validation(request: Request, exc: Exception) -> Response:
    """400 on ``/v1`` (as OpenAI answers), FastAPI's 422 elsewhere; both OpenAI-shaped."""
    assert isinstance(exc, RequestValidationError)
    message, param = _describe(exc)
    status = 400 if request.url.path.startswith("/v1/") else 422
    return JSONResponse(ApiError(status, message, param=param).body(), status)


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def _http_error(_request: Request, exc: Exception) -> Response:
    """Starlette's own errors (unknown route 404, 405, any ``HTTPException``)."""
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    kind = "api_error" if exc.status_code >= 500 else "invalid_request_error"
    error = ApiError(exc.status_code, str(exc.detail), type=kind, code=code)
    return JSONResponse(error.body(), exc.status_code, headers=exc.headers)


def _document_errors(app: FastAPI, routes: DeferredRoutes) -> None:
    """Make the OpenAPI document say what :func:`_validation` answers: no 422 on ``/v1``
    (validation is a 400 there), the OpenAI error body for every other 422; and document
    every route group, the deferred ones included first."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        routes.include()
        schema = build()
        error = {"$ref": "#/components/schemas/ErrorResponse"}
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                responses = operation.get("responses", {})
                if "422" not in responses:
                    continue
                if path.startswith("/v1/"):
                    del responses["422"]
                else:
                    responses["422"] = {
                        "description": "Invalid request (path, query or body)",
                        "content": {"application/json": {"schema": error}},
                    }
        components = schema.get("components", {}).get("schemas", {})
        components.pop("HTTPValidationError", None)
        components.pop("ValidationError", None)
        return schema

    app.openapi = openapi  # FastAPI's documented way to customise the document


def create_app(runtime: GatewayRuntime) -> FastAPI:
    """Build the app; its lifespan starts and stops ``runtime`` in order."""
    services = GatewayServices(runtime)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
        await runtime.start()
        try:
            await services.start()
            yield
        finally:
            routes: DeferredRoutes = app.state.routes
            await routes.aclose()
            await services.close()
            await runtime.stop()

    app = FastAPI(
        title="BeamClaw gateway",
        version=__version__,
        description="Personal AI agent gateway: OpenAI-compatible API, WebSocket, REST, "
        "webhooks and A2A. Reference: docs/api.md.",
        lifespan=lifespan,
        # BeamClaw's events, logs and metrics are beamclaw-obs's; FastAPI's native
        # OpenTelemetry would otherwise ask the global OTel providers on every request
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.runtime = runtime
    app.state.services = services
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(GatewayNotStartedError, _not_started)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http_error)
    app.include_router(health_router)
    routes = DeferredRoutes(app, ROUTE_GROUPS)
    app.state.routes = routes
    _document_errors(app, routes)
    app.add_middleware(
        DeferredRoutesMiddleware,
        routes=routes,
        probes=frozenset(r.path for r in health_router.routes if isinstance(r, APIRoute)),
    )
    app.add_middleware(
        RateLimitMiddleware,
        limiter=services.limiter,
        guard=services.auth,
        trust_forwarded_for=runtime.config.gateway.http.trust_forwarded_for,
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=runtime.config.gateway.http.max_body_bytes)
    app.add_middleware(RequestEventsMiddleware)
    app.add_middleware(RequestContextMiddleware)
    return app
