"""The middleware every request passes, whichever app answers it (app.py: the probes'
before the API is built, then the API's), innermost first: rate limit (429) → body-size
limit (413) → the ``http_request`` event → request context (``X-Request-Id``, log
context, JSON 500 for an escaped exception)."""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp

from beamclaw_gateway.middleware import BodyLimitMiddleware, RateLimitMiddleware
from beamclaw_gateway.request_context import RequestContextMiddleware
from beamclaw_gateway.request_events import RequestEventsMiddleware
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.services import GatewayServices

__all__ = ["request_middleware", "wrap_in_request_middleware"]


def request_middleware(
    runtime: GatewayRuntime, services: GatewayServices
) -> list[tuple[type[Any], dict[str, Any]]]:
    """Each middleware class and its options, innermost first (as ``add_middleware``
    takes them: the last added is the outermost)."""
    http = runtime.config.gateway.http
    return [
        (
            RateLimitMiddleware,
            {
                "limiter": services.limiter,
                "guard": services.auth,
                "trust_forwarded_for": http.trust_forwarded_for,
            },
        ),
        (BodyLimitMiddleware, {"max_bytes": http.max_body_bytes}),
        (RequestEventsMiddleware, {}),
        (RequestContextMiddleware, {}),
    ]


def wrap_in_request_middleware(
    app: ASGIApp, runtime: GatewayRuntime, services: GatewayServices
) -> ASGIApp:
    """``app`` inside :func:`request_middleware`."""
    for middleware, options in request_middleware(runtime, services):
        app = middleware(app, **options)
    return app
