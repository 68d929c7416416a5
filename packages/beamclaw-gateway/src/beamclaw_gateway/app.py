"""The gateway's ASGI app: the lifespan, the probes, and the API built on first use.

Importing FastAPI and building the API (every route group's models and FastAPI's
per-route validators, api.py) is most of a start-up, and no probe needs it.
:class:`GatewayApp` answers ``GET /health``, ``/ready`` and ``/metrics`` through the same
request middleware (request_stack.py) with the same answers (probes.py) until the API is
built. A client's first request is most often the OpenAI-compatible API's or ``/ws``: the
front API (api_front.py, those two groups only) is built first and answers them until the
whole API is built; every other request waits for the whole API.

Invariants: ``/ready`` means what it meant (the runtime started: store migrated, core
running); each API is built once, either in a worker thread once the server listens
(:meth:`GatewayApp.warm`: the front one, then the whole one) or on the event loop's thread
by the first request that needs it (which waits for a running warm-up instead); the front
API answers its paths exactly as the whole one does; once the whole API is built, it
answers every request, the probes included, exactly as a gateway that built it at start.
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
"""The module that builds the whole API (``build_api``): FastAPI and every route group."""
FRONT_MODULE = "beamclaw_gateway.api_front"
"""The module that builds the front API (``build_front_api``): FastAPI, ``/v1`` and
``/ws``."""


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
        self._front: FastAPI | None = None
        self._api: FastAPI | None = None
        self._warming: asyncio.Task[None] | None = None
        self._front_warmed = asyncio.Event()

    @property
    def built(self) -> bool:
        """The whole API is built (and answers every request from now on)."""
        return self._api is not None

    @property
    def front_built(self) -> bool:
        """The front API is built, or the whole one (either answers ``/v1`` and ``/ws``)."""
        return self._front is not None or self._api is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        api: ASGIApp
        if scope["type"] == "lifespan":
            await self._lifespan.lifespan(scope, receive, send)
        elif self._api is not None:
            await self._api(scope, receive, send)
        elif _is_probe(scope):
            await self._probes(scope, receive, send)
        elif _is_front(scope):
            api = await self._ready_front()
            await api(scope, receive, send)
        else:
            api = await self._ready_api()
            await api(scope, receive, send)

    def api(self) -> FastAPI:
        """The whole API, built now if it is not yet (on the event loop's thread, or with
        no loop running)."""
        if self._api is None:
            self._api = self._build(API_MODULE, "build_api")
            self._front = None  # the whole API answers the front's paths from now on
        return self._api

    def warm(self, then: Callable[[], None] | None = None) -> None:
        """Build the front API, then the whole one, each in a worker thread, then call
        ``then`` on the event loop (once; call it from the event loop once the server
        listens). One warm-up after another: each worker thread importing beside the event
        loop delays its answers."""
        if self._api is None and self._warming is None:
            self._warming = asyncio.create_task(self._warm(then))
        elif then is not None:
            then()

    async def _warm(self, then: Callable[[], None] | None) -> None:
        try:
            if not self.front_built:
                front = await asyncio.to_thread(self._build, FRONT_MODULE, "build_front_api")
                if not self.front_built:
                    self._front = front
            self._front_warmed.set()
            api = await asyncio.to_thread(self._build, API_MODULE, "build_api")
            if self._api is None:
                self._api, self._front = api, None
        finally:
            self._front_warmed.set()  # a failed build: the waiting request meets it
            if then is not None:
                then()

    async def _ready_front(self) -> FastAPI:
        if not self.front_built and self._warming is not None:
            await self._front_warmed.wait()
        if self._api is not None:
            return self._api
        if self._front is None:
            self._front = self._build(FRONT_MODULE, "build_front_api")
        return self._front

    async def _ready_api(self) -> FastAPI:
        warming = self._warming
        if self._api is None and warming is not None:
            # never cancels the build; if it failed, this request builds (and meets) it
            await asyncio.wait([warming])
        return self.api()

    def _build(self, module: str, builder: str) -> FastAPI:
        build: Any = getattr(import_module(module), builder)
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


def _is_front(scope: Scope) -> bool:
    path: str = scope["path"]
    return path == "/ws" or path == "/v1" or path.startswith("/v1/")


def create_app(runtime: GatewayRuntime) -> GatewayApp:
    """The gateway's app; its lifespan starts and stops ``runtime`` in order."""
    return GatewayApp(runtime)
