"""The front API: the routes a client starts with, the OpenAI-compatible ``/v1`` and the
``/ws`` protocol, built before the rest (app.py) so that the first such request waits
only for FastAPI and these two groups.

Invariant: it answers every path under ``/v1`` and ``/ws`` exactly as the whole API
(api.py) does, which routes those paths to the same routers, handlers and middleware;
no other group has a path there (tested).
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from beamclaw_gateway.api_assembly import assemble_api
from beamclaw_gateway.routes_openai import router as openai_router
from beamclaw_gateway.routes_ws import router as ws_router
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

__all__ = ["FRONT_ROUTERS", "build_front_api"]

FRONT_ROUTERS: tuple[APIRouter, ...] = (openai_router, ws_router)


def build_front_api(runtime: GatewayRuntime, services: GatewayServices) -> FastAPI:
    """The front API of ``runtime`` and its ``services``."""
    return assemble_api(runtime, services, FRONT_ROUTERS)
