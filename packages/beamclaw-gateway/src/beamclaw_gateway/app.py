"""The FastAPI application factory. Routes live in ``routes_*`` modules.

Request path, outermost first: the ``http_request`` obs event (request_events.py) →
body-size limit (413) → rate limit (429, HTTP and WS handshakes) → routing → bearer-token
dependency (401) → handler. Every error the gateway itself produces has the OpenAI error
shape.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from beamclaw_gateway._version import __version__
from beamclaw_gateway.errors import ApiError, GatewayNotStartedError
from beamclaw_gateway.middleware import BodyLimitMiddleware, RateLimitMiddleware
from beamclaw_gateway.request_events import RequestEventsMiddleware
from beamclaw_gateway.routes_a2a import router as a2a_router
from beamclaw_gateway.routes_api import router as api_router
from beamclaw_gateway.routes_health import router as health_router
from beamclaw_gateway.routes_openai import router as openai_router
from beamclaw_gateway.routes_webhooks import router as webhooks_router
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices
from beamclaw_gateway.ws import router as ws_router


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


async def _validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    if request.url.path.startswith("/v1/"):
        message, param = _describe(exc)
        return JSONResponse(ApiError(400, message, param=param).body(), 400)
    return await request_validation_exception_handler(request, exc)


def create_app(runtime: GatewayRuntime) -> FastAPI:
    """Build the app; its lifespan starts and stops ``runtime`` in order."""
    services = GatewayServices(runtime)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncGenerator[None]:
        await runtime.start()
        try:
            yield
        finally:
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
    app.include_router(health_router)
    app.include_router(openai_router)
    app.include_router(api_router)
    app.include_router(ws_router)
    app.include_router(webhooks_router)
    app.include_router(a2a_router)
    app.add_middleware(
        RateLimitMiddleware,
        limiter=services.limiter,
        trust_forwarded_for=runtime.config.gateway.http.trust_forwarded_for,
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=runtime.config.gateway.http.max_body_bytes)
    app.add_middleware(RequestEventsMiddleware)
    return app
