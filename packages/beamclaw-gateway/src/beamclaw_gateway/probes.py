"""What ``/health``, ``/ready`` and ``/metrics`` answer, and the small app that answers
them before the API is built (app.py).

Invariants: each probe's answer is computed here once, for both its routes (the API's,
routes_health.py, which documents them, and :func:`probe_app`'s), so a probe answers the
same whichever app serves it. :func:`probe_app` needs no FastAPI: only Starlette's
router, the answers' models and the runtime.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from beamclaw_gateway._version import __version__
from beamclaw_gateway.auth import bearer_token, unauthorized
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.process_stats import process_metrics
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

__all__ = [
    "PROBE_PATHS",
    "PROMETHEUS_CONTENT_TYPE",
    "HealthBody",
    "ReadyBody",
    "health_body",
    "metrics_response",
    "probe_app",
    "ready_response",
]

PROBE_PATHS = frozenset({"/health", "/ready", "/metrics"})
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class HealthBody(BaseModel):
    status: str
    version: str
    uptime_seconds: float
    event_loop: str
    """``uvloop`` or ``asyncio`` (``[gateway.http] loop``)."""
    components: dict[str, dict[str, Any]]


class ReadyBody(BaseModel):
    ready: bool


def _loop_name() -> str:
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.startswith("uvloop") else "asyncio"


def health_body(runtime: GatewayRuntime) -> HealthBody:
    """Overall status, version, uptime and each component's status."""
    snap = runtime.health.snapshot()
    return HealthBody(
        status=runtime.health.overall().value,
        version=__version__,
        uptime_seconds=round(runtime.uptime_seconds, 3),
        event_loop=_loop_name(),
        components={name: h.as_dict() for name, h in snap.items()},
    )


def ready_response(runtime: GatewayRuntime) -> JSONResponse:
    """200 when the gateway can take turns, else 503."""
    ok = runtime.started and runtime.health.ready()
    return JSONResponse({"ready": ok}, status_code=200 if ok else 503)


def metrics_response(
    runtime: GatewayRuntime, services: GatewayServices, authorization: str | None
) -> Response:
    """The Prometheus text; :class:`ApiError` 401 without the token (``metrics_public``
    false), 404 with metrics disabled."""
    if not services.auth.metrics_public and not services.auth.check(bearer_token(authorization)):
        raise unauthorized()
    if runtime.metrics is None:
        raise ApiError(
            404, "Metrics are disabled ([obs] metrics_enabled = false).", code="metrics_disabled"
        )
    return Response(
        runtime.metrics.render() + process_metrics(), media_type=PROMETHEUS_CONTENT_TYPE
    )


def probe_app(runtime: GatewayRuntime, services: GatewayServices) -> ASGIApp:
    """The probes as a Starlette router (``GET`` on :data:`PROBE_PATHS` only), answering
    an :class:`ApiError` as the API's handler does."""

    async def health(_request: Request) -> Response:
        return JSONResponse(health_body(runtime).model_dump(mode="json"))

    async def ready(_request: Request) -> Response:
        return ready_response(runtime)

    async def metrics(request: Request) -> Response:
        try:
            return metrics_response(runtime, services, request.headers.get("authorization"))
        except ApiError as exc:
            return JSONResponse(exc.body(), exc.status, headers=exc.headers)

    router = Router(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/ready", ready, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ]
    )

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await router(scope, receive, send)

    return app
