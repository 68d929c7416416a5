"""``/health``, ``/ready`` and ``/metrics``."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from beamclaw_gateway._version import __version__
from beamclaw_gateway.auth import bearer_token, unauthorized
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.process_stats import process_metrics
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

router = APIRouter()

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


def _runtime(request: Request) -> GatewayRuntime:
    runtime: GatewayRuntime = request.app.state.runtime
    return runtime


@router.get("/health", response_model=HealthBody, tags=["health"])
async def health(request: Request) -> HealthBody:
    """Overall status, version, uptime and each component's status. Always open."""
    rt = _runtime(request)
    snap = rt.health.snapshot()
    return HealthBody(
        status=rt.health.overall().value,
        version=__version__,
        uptime_seconds=round(rt.uptime_seconds, 3),
        event_loop=_loop_name(),
        components={name: h.as_dict() for name, h in snap.items()},
    )


@router.get(
    "/ready",
    response_model=ReadyBody,
    tags=["health"],
    responses={503: {"model": ReadyBody, "description": "Not ready to take turns"}},
)
async def ready(request: Request) -> JSONResponse:
    """200 when the gateway can take turns, else 503."""
    rt = _runtime(request)
    ok = rt.started and rt.health.ready()
    return JSONResponse({"ready": ok}, status_code=200 if ok else 503)


@router.get(
    "/metrics",
    tags=["health"],
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {}}},
        401: {"description": "Token required (metrics_public = false)"},
        404: {"description": "Metrics disabled"},
    },
)
async def metrics(request: Request) -> Response:
    """Prometheus text exposition (needs the token when ``metrics_public`` is false)."""
    rt = _runtime(request)
    services: GatewayServices = request.app.state.services
    if not services.auth.metrics_public and not services.auth.check(
        bearer_token(request.headers.get("authorization"))
    ):
        raise unauthorized()
    if rt.metrics is None:
        raise ApiError(
            404, "Metrics are disabled ([obs] metrics_enabled = false).", code="metrics_disabled"
        )
    return Response(rt.metrics.render() + process_metrics(), media_type=PROMETHEUS_CONTENT_TYPE)
