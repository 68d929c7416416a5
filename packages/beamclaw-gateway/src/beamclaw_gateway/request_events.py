"""ASGI middleware: one ``http_request`` obs event per HTTP request.

Just inside the request-context layer (app.py), so requests refused by the body limit (413) or the rate
limiter (429) are counted too. The event carries the method, the matched route's
template (``/api/sessions/{session_id}``, never the raw path: bounded metric labels and
no ids in them; ``unmatched`` when no route matched, as for the 413s and 429s refused
before routing), the response status (500 when the app raised before answering) and the
duration in milliseconds up to the response's end, and the request's ``X-Request-Id``
(obs backends log from their own task, where the log context does not reach). WebSocket handshakes are not HTTP
requests here.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from beamclaw_obs import EventType, emit

UNMATCHED = "unmatched"


def route_template(scope: Scope) -> str:
    """The path template of the route that handled ``scope`` (set by routing)."""
    path = getattr(scope.get("route"), "path", None)
    return path if isinstance(path, str) and path else UNMATCHED


class RequestEventsMiddleware:
    """Emits ``http_request`` after each HTTP response (or failure)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observing_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, observing_send)
        finally:
            emit(
                EventType.HTTP_REQUEST,
                method=scope["method"],
                route=route_template(scope),
                status=status,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                request_id=scope.get("state", {}).get("request_id"),
            )
