"""The gateway's ASGI app: the lifespan, the probes, and the API built on first use.

Importing FastAPI and building the API (every route group's models and FastAPI's
per-route validators, api.py) is most of a start-up, and no probe needs it.
:class:`GatewayApp` answers ``GET /health``, ``/ready`` and ``/metrics`` through the same
request middleware (request_stack.py) with the same answers (probes.py) until the API is
built, and hands every other request to the API, building it first if need be.

Invariants: ``/ready`` means what it meant (the runtime started: store migrated, core
running); the API is built once, either in a worker thread once the server listens
(:meth:`GatewayApp.warm`) or on the event loop's thread by the first request that is not
a probe (which waits for a running warm-up instead); once built, it answers every
request, the probes included, exactly as a gateway that built it at start.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from importlib import import_module
from typing import TYPE_CHECKING, Any

from loguru import logger
from starlette.datastructures import State
from starlette.routing import Router
from starlette.types import ASGIApp, Receive, Scope, Send

from beamclaw_gateway.probes import PROBE_PATHS, probe_app
from beamclaw_gateway.request_stack import wrap_in_request_middleware
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["GatewayApp", "create_app"]

API_MODULE = "beamclaw_gateway.api"
"""The module that builds the API (``build_api``): FastAPI and every route group."""


class GatewayApp:
    """The ASGI app of one gateway: its lifespan starts and stops ``runtime`` and the
    services in order; ``state`` holds both, as the API's does."""

    def __init__(self, runtime: GatewayRuntime) -> None:
        self.runtime = runtime
        self.services = GatewayServices(runtime)
        self.state = State({"runtime": runtime, "services": self.services})
        self._lifespan = Router(lifespan=self._lifespan_context)
        self._probes = wrap_in_request_middleware(
            probe_app(runtime, self.services), runtime, self.services
        )
        self._api: FastAPI | None = None
        self._warming: asyncio.Task[None] | None = None

    @property
    def built(self) -> bool:
        """The API is built (and answers every request from now on)."""
        return self._api is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan.lifespan(scope, receive, send)
        elif self._api is None and _is_probe(scope):
            await self._probes(scope, receive, send)
        else:
            api: ASGIApp = await self._ready_api()
            await api(scope, receive, send)

    def api(self) -> FastAPI:
        """The API, built now if it is not yet (on the event loop's thread, or with no
        loop running)."""
        if self._api is None:
            self._api = self._build()
        return self._api

    def warm(self, then: Callable[[], None] | None = None) -> None:
        """Build the API in a worker thread, then call ``then`` on the event loop (once;
        call it from the event loop once the server listens). One warm-up after another:
        each worker thread importing beside the event loop delays its answers."""
        if self._api is None and self._warming is None:
            self._warming = asyncio.create_task(self._warm(then))
        elif then is not None:
            then()

    async def _warm(self, then: Callable[[], None] | None) -> None:
        try:
            api = await asyncio.to_thread(self._build)
            if self._api is None:
                self._api = api
        finally:
            if then is not None:
                then()

    async def _ready_api(self) -> FastAPI:
        warming = self._warming
        if self._api is None and warming is not None:
            # never cancels the build; if it failed, this request builds (and meets) it
            await asyncio.wait([warming])
        return self.api()

    def _build(self) -> FastAPI:
        build: Any = import_module(API_MODULE).build_api
        api: FastAPI = build(self.runtime, self.services)
        return api

    @asynccontextmanager
    async def _lifespan_context(self, _app: object) -> AsyncGenerator[None]:
        await self.runtime.start()
        try:
            await self.services.start()
            yield
        finally:
            await self._settle_warming()
            await self.services.close()
            await self.runtime.stop()

    async def _settle_warming(self) -> None:
        """Wait for a running :meth:`warm` (a thread cannot be cancelled); its failure is
        logged here (a request that is not a probe's meets it again, building the API)."""
        warming, self._warming = self._warming, None
        if warming is None:
            return
        await asyncio.wait([warming])
        if not warming.cancelled() and (exc := warming.exception()) is not None:
            logger.warning("building the API failed: {!r}", exc)


def _is_probe(scope: Scope) -> bool:
    return scope["type"] == "http" and scope["method"] == "GET" and scope["path"] in PROBE_PATHS


def create_app(runtime: GatewayRuntime) -> GatewayApp:
    """The gateway's app; its lifespan starts and stops ``runtime`` in order."""
    return GatewayApp(runtime)
