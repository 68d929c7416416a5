"""Test and benchmark helpers: a real gateway served by uvicorn on 127.0.0.1.

``async with live_gateway(provider) as gw:`` starts the runtime (own database in
``$BEAMCLAW_HOME``), serves the app on a free loopback port in the current event loop and
stops both on exit. ``provider`` is a :class:`Provider` for every agent, a factory
``agent_id -> Provider``, or None to use the configured provider chains (e.g. pointed at
``beamclaw_core.testing.FakeOpenAIServer``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from beamclaw_core.providers import Provider
from beamclaw_gateway.app import GatewayApp, create_app
from beamclaw_gateway.config import BeamclawConfig
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_memory import Database


def quiet_config() -> BeamclawConfig:
    """Defaults for tests and benchmarks: no debounce, resets, maintenance or retry delay;
    rate limits high enough not to interfere."""
    config = BeamclawConfig()
    config.core.queue.debounce_ms = 0
    config.core.reset.daily_hour = None
    config.core.maintenance.idle_compaction_minutes = None
    config.core.maintenance.nightly_hour = None
    config.core.agentic_loop.retry_base_delay_seconds = 0.0
    config.gateway.rate_limit.per_ip = "1000000/minute"
    config.gateway.rate_limit.per_loopback = "1000000/minute"
    config.gateway.rate_limit.per_token = "1000000/minute"  # noqa: S105 - a rate
    return config


@dataclass
class LiveGateway:
    """A running gateway: its runtime, app and port."""

    runtime: GatewayRuntime
    app: GatewayApp
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


@asynccontextmanager
async def live_gateway(
    provider: Provider | Callable[[str], Provider] | None = None,
    config: BeamclawConfig | None = None,
    database_factory: Callable[[str], Database] = Database,
) -> AsyncGenerator[LiveGateway]:
    """Serve a gateway on ``127.0.0.1:<free port>`` for the duration of the block.

    ``database_factory``: see :class:`GatewayRuntime` (a failing database for outages)."""
    factory: Callable[[str], Provider] | None
    if provider is None or not isinstance(provider, Provider):
        factory = provider
    else:
        fixed = provider
        factory = lambda _agent: fixed  # noqa: E731 - one provider for every agent
    config = config or quiet_config()
    runtime = GatewayRuntime(config, provider_factory=factory, database_factory=database_factory)
    app = create_app(runtime)
    app.api()  # built before serving: tests and benchmarks time requests, not the build
    async with serve_app(
        app,
        ws_ping_interval=config.gateway.ws.ping_interval_seconds,
        ws_ping_timeout=config.gateway.ws.ping_interval_seconds,
        timeout_graceful_shutdown=config.gateway.http.shutdown_grace_seconds,
    ) as port:
        yield LiveGateway(runtime, app, port)


@asynccontextmanager
async def serve_app(app: Any, **settings: Any) -> AsyncGenerator[int]:
    """Serve the ASGI ``app`` with uvicorn on ``127.0.0.1:<free port>`` in this event loop
    (lifespan on, quiet), ``settings`` added to its ``uvicorn.Config``; yields the port
    once it listens, and stops the server after the block."""
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            lifespan="on",
            log_level="warning",
            access_log=False,
            **settings,
        )
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("uvicorn did not start")
        await asyncio.sleep(0.01)
    try:
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        await task
