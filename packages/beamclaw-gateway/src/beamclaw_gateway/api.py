"""The whole API: every route group in one FastAPI app (api_assembly.py gives it its
error handling and request middleware). Routes live in ``routes_*`` modules.

Built by the gateway's app (app.py) once it listens, after the front API (api_front.py),
or on the first request that neither a probe nor the front API answers.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from beamclaw_gateway.api_assembly import assemble_api
from beamclaw_gateway.routes_a2a import router as a2a_router
from beamclaw_gateway.routes_api import router as api_router
from beamclaw_gateway.routes_approvals import router as approvals_router
from beamclaw_gateway.routes_health import router as health_router
from beamclaw_gateway.routes_identities import router as identities_router
from beamclaw_gateway.routes_integrations import router as integrations_router
from beamclaw_gateway.routes_openai import router as openai_router
from beamclaw_gateway.routes_pairing import router as pairing_router
from beamclaw_gateway.routes_schedules import router as schedules_router
from beamclaw_gateway.routes_tasks import router as tasks_router
from beamclaw_gateway.routes_telegram import router as telegram_router
from beamclaw_gateway.routes_usage import router as usage_router
from beamclaw_gateway.routes_webhooks import router as webhooks_router
from beamclaw_gateway.routes_ws import router as ws_router
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices
from beamclaw_gateway.ui import router as ui_router

__all__ = ["ROUTERS", "build_api"]

ROUTERS: tuple[APIRouter, ...] = (
    health_router,
    openai_router,
    api_router,
    approvals_router,
    usage_router,
    schedules_router,
    tasks_router,
    identities_router,
    pairing_router,
    ws_router,
    telegram_router,  # before /webhook/{source}: "telegram" is reserved
    webhooks_router,
    a2a_router,
    integrations_router,
    ui_router,
)
"""Every route group, in the order the router tries them (and the OpenAPI document lists
them)."""


def build_api(runtime: GatewayRuntime, services: GatewayServices) -> FastAPI:
    """The API of ``runtime`` and its ``services`` (started and stopped by their owner)."""
    return assemble_api(runtime, services, ROUTERS)
