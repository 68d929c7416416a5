"""Route groups the app includes on first use, so the gateway listens (and answers
``/ready``) before it has built them.

Importing a route module builds its request and response models and FastAPI's per-route
validators: most of the app's start-up cost, paid for routes no probe needs. The app is
created with its probes (``/health``, ``/ready``, ``/metrics``) and a
:class:`DeferredRoutes` naming the other groups' modules (each exposes ``router``).

Invariants: the groups are included all at once, in the order given, on the event loop's
thread, before the first request that is not a probe is routed and before the OpenAPI
document is built; from then on the app routes, and documents, exactly as one created
with every group included. :meth:`DeferredRoutes.warm` (once the listener is up) imports
the modules in a worker thread; a request arriving meanwhile waits for it rather than
importing beside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from importlib import import_module

from fastapi import APIRouter, FastAPI
from loguru import logger
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["DeferredRoutes", "DeferredRoutesMiddleware"]


class DeferredRoutes:
    """The route groups of ``app`` still to include, by module name, in routing order."""

    def __init__(self, app: FastAPI, modules: Sequence[str]) -> None:
        self.app = app
        self.modules = tuple(modules)
        self._included = False
        self._warming: asyncio.Task[None] | None = None

    @property
    def included(self) -> bool:
        return self._included

    def routers(self) -> list[APIRouter]:
        """Import the groups' modules (from any thread) and return their routers."""
        routers: list[APIRouter] = []
        for name in self.modules:
            router = getattr(import_module(name), "router", None)
            if not isinstance(router, APIRouter):
                raise TypeError(f"{name}.router is not an APIRouter")
            routers.append(router)
        return routers

    def include(self) -> None:
        """Include every group now (idempotent; on the event loop's thread)."""
        if self._included:
            return
        for router in self.routers():
            self.app.include_router(router)
        self._included = True

    async def ensure_included(self) -> None:
        """Include the groups, first letting a running :meth:`warm` finish its imports."""
        if self._included:
            return
        if self._warming is not None:
            await asyncio.shield(self._warming)
        self.include()

    def warm(self) -> None:
        """Import the groups' modules in a worker thread, then include them (once; call
        it from the event loop once the listener is up)."""
        if not self._included and self._warming is None:
            self._warming = asyncio.create_task(self._warm())

    async def _warm(self) -> None:
        await asyncio.to_thread(self.routers)
        self.include()

    async def aclose(self) -> None:
        """Wait for a running :meth:`warm` (an import in a thread cannot be cancelled); a
        group that failed to load is logged here, as every request not a probe answers
        500 with it."""
        warming, self._warming = self._warming, None
        if warming is None:
            return
        await asyncio.wait([warming])
        if not warming.cancelled() and (exc := warming.exception()) is not None:
            logger.warning("route groups failed to load: {!r}", exc)


class DeferredRoutesMiddleware:
    """Includes the deferred groups before routing any request but a probe's."""

    def __init__(self, app: ASGIApp, *, routes: DeferredRoutes, probes: frozenset[str]) -> None:
        """``probes``: the paths answered without the deferred groups."""
        self.app = app
        self.routes = routes
        self.probes = probes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            not self.routes.included
            and scope["type"] in ("http", "websocket")
            and scope["path"] not in self.probes
        ):
            await self.routes.ensure_included()
        await self.app(scope, receive, send)
