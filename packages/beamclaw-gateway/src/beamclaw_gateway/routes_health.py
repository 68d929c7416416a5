"""``/health``, ``/ready`` and ``/metrics`` in the API (their answers: probes.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from beamclaw_gateway.probes import (
    HealthBody,
    ReadyBody,
    health_body,
    metrics_response,
    ready_response,
)
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

router = APIRouter()


def _runtime(request: Request) -> GatewayRuntime:
    runtime: GatewayRuntime = request.app.state.runtime
    return runtime


@router.get("/health", response_model=HealthBody, tags=["health"])
async def health(request: Request) -> HealthBody:
    """Overall status, version, uptime and each component's status. Always open."""
    return health_body(_runtime(request))


@router.get(
    "/ready",
    response_model=ReadyBody,
    tags=["health"],
    responses={503: {"model": ReadyBody, "description": "Not ready to take turns"}},
)
async def ready(request: Request) -> JSONResponse:
    """200 when the gateway can take turns, else 503."""
    return ready_response(_runtime(request))


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
    services: GatewayServices = request.app.state.services
    return metrics_response(_runtime(request), services, request.headers.get("authorization"))
