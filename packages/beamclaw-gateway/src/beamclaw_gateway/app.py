"""The FastAPI application factory. Routes live in ``routes_*`` modules."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from beamclaw_gateway._version import __version__
from beamclaw_gateway.routes_health import router as health_router
from beamclaw_gateway.runtime import GatewayRuntime


def create_app(runtime: GatewayRuntime) -> FastAPI:
    """Build the app; its lifespan starts and stops ``runtime`` in order."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncGenerator[None]:
        await runtime.start()
        try:
            yield
        finally:
            await runtime.stop()

    app = FastAPI(
        title="BeamClaw gateway",
        version=__version__,
        description="Personal AI agent gateway: OpenAI-compatible API, WebSocket, REST.",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    app.include_router(health_router)
    return app
