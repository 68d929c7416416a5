"""A real gateway on 127.0.0.1 (uvicorn on a free port) backed by a scripted provider."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from beamclaw_core.providers import Provider
from beamclaw_gateway import BeamclawConfig, GatewayRuntime, create_app


def gateway_config(**gateway: Any) -> BeamclawConfig:
    """Defaults tuned for tests: no debounce, no daily reset, no background maintenance."""
    config = BeamclawConfig()
    config.core.queue.debounce_ms = 0
    config.core.reset.daily_hour = None
    config.core.maintenance.idle_compaction_minutes = None
    config.core.maintenance.nightly_hour = None
    config.core.agentic_loop.retry_base_delay_seconds = 0.0
    config.gateway.rate_limit.per_ip = "100000/minute"
    config.gateway.rate_limit.per_token = "100000/minute"
    for key, value in gateway.items():
        setattr(config.gateway, key, value)
    return config


@dataclass
class LiveGateway:
    runtime: GatewayRuntime
    app: FastAPI
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


@asynccontextmanager
async def live_gateway(
    provider: Provider | Callable[[str], Provider], config: BeamclawConfig | None = None
) -> AsyncIterator[LiveGateway]:
    factory: Callable[[str], Provider] = (
        provider if not isinstance(provider, Provider) else (lambda _agent: provider)
    )
    runtime = GatewayRuntime(config or gateway_config(), provider_factory=factory)
    app = create_app(runtime)
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=0, lifespan="on", log_level="warning", access_log=False
        )
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("uvicorn did not start")
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield LiveGateway(runtime, app, port)
    finally:
        server.should_exit = True
        await task


@pytest.fixture
def gateway_factory() -> Callable[..., Any]:
    return live_gateway
