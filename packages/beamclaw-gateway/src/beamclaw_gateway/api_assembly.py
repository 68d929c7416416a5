"""What every API of the gateway shares (api.py builds the whole one, api_front.py the
front one first): FastAPI's app, the error handlers and the request middleware.

Request path, outermost first: request context (``X-Request-Id``, log context, JSON 500
for an escaped exception) → the ``http_request`` obs event (request_events.py) →
body-size limit (413) → rate limit (429, HTTP and WS handshakes) → the hot path of
``POST /v1/chat/completions`` (hot_path.py: an authorized, valid turn goes straight to
its handler) → routing → bearer-token dependency (401) → handler. Every error response,
whatever produced it (404/405 routing, 422 validation, an ``HTTPException``, a crash),
has the OpenAI error shape. The gateway's app (app.py) runs the lifespan, so no API has one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from beamclaw_gateway._version import __version__
from beamclaw_gateway.errors import ApiError, GatewayNotStartedError
from beamclaw_gateway.hot_path import HOT_ROUTER, ChatCompletionsHotPath, Handler
from beamclaw_gateway.request_stack import request_middleware
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

__all__ = ["HANDLERS", "assemble_api"]


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


def _document_errors(app: FastAPI) -> None:
    """Make the OpenAPI document say what :func:`_validation` answers: no 422 on ``/v1``
    (validation is a 400 there), the OpenAI error body for every other 422."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
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


HANDLERS: dict[type[Exception], Handler] = {
    ApiError: _api_error,
    GatewayNotStartedError: _not_started,
    RequestValidationError: _validation,
    HTTPException: _http_error,
}
"""The API's exception handlers (FastAPI's, and the hot path's: hot_path.py)."""


def assemble_api(
    runtime: GatewayRuntime,
    services: GatewayServices,
    routers: Sequence[APIRouter],
    *,
    hot_path: bool = True,
) -> FastAPI:
    """An API of ``runtime`` and its ``services`` (started and stopped by their owner)
    with ``routers`` in order: the same error handling and request middleware whatever
    the routers. With the OpenAI router, turns take the hot path (hot_path.py) unless
    ``hot_path`` is False (every request through FastAPI: what the hot path must equal)."""
    app = FastAPI(
        title="BeamClaw gateway",
        version=__version__,
        description="Personal AI agent gateway: OpenAI-compatible API, WebSocket, REST, "
        "webhooks and A2A. Reference: docs/api.md.",
        # BeamClaw's events, logs and metrics are beamclaw-obs's; FastAPI's native
        # OpenTelemetry would otherwise ask the global OTel providers on every request
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.runtime = runtime
    app.state.services = services
    for kind, handler in HANDLERS.items():
        app.add_exception_handler(kind, handler)
    for router in routers:
        app.include_router(router)
    _document_errors(app)
    if hot_path and HOT_ROUTER in routers:  # the innermost: inside the rate and body limits
        app.add_middleware(ChatCompletionsHotPath, handlers=HANDLERS)
    for middleware, options in request_middleware(runtime, services):
        app.add_middleware(middleware, **options)
    return app
