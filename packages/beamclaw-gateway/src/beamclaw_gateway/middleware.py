"""ASGI middleware: request-body size limit and rate limiting (HTTP and WS handshakes).

Both are plain ASGI apps wrapping the app (starlette's pattern), so they run before
routing, before any body is read and before a WebSocket is accepted.
"""

from __future__ import annotations

import json

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from beamclaw_gateway.auth import TOKEN_REFUSAL, TokenGuard, bearer_token, token_key
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.ratelimit import ClientKind, RateLimiter, client_kind


def client_ip(scope: Scope, *, trust_forwarded_for: bool = False) -> str:
    """The peer's IP (or the first ``X-Forwarded-For`` hop behind a trusted proxy)."""
    if trust_forwarded_for:
        forwarded = Headers(scope=scope).get("x-forwarded-for")
        if forwarded:
            return forwarded.split(",")[0].strip()
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def rate_subject(
    ip: str, presented: str | None, refusal: str | None, *, checked: bool
) -> tuple[ClientKind, str]:
    """The kind of client and the identity its requests are counted under: a valid
    token (when one is configured, ``checked``, and ``refusal`` is None) by its hash,
    anyone else by IP."""
    verified = checked and refusal is None
    kind = client_kind(ip, token_verified=verified, token_rejected=checked and not verified)
    if kind == "authenticated" and presented is not None:
        return kind, token_key(presented)
    return kind, ip


async def send_error(send: Send, error: ApiError) -> None:
    """Write ``error`` as a complete JSON HTTP response."""
    body = json.dumps(error.body()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *[(k.lower().encode(), v.encode()) for k, v in error.headers.items()],
    ]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def deny_websocket(scope: Scope, send: Send, error: ApiError) -> None:
    """Refuse a WebSocket handshake with an HTTP response (or a close when unsupported)."""
    if "websocket.http.response" in scope.get("extensions", {}):
        body = json.dumps(error.body()).encode()
        headers = [
            (b"content-type", b"application/json"),
            *[(k.lower().encode(), v.encode()) for k, v in error.headers.items()],
        ]
        await send(
            {"type": "websocket.http.response.start", "status": error.status, "headers": headers}
        )
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": error.message[:120]})


class _BodyTooLargeError(Exception):
    pass


class BodyLimitMiddleware:
    """Answers 413 to a request whose body exceeds ``max_bytes`` (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _error(self) -> ApiError:
        return ApiError(
            413,
            f"request body larger than {self.max_bytes} bytes",
            code="request_too_large",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await send_error(send, self._error())
            return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _BodyTooLargeError
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLargeError:
            if not started:
                await send_error(send, self._error())


STATIC_PREFIX = "/ui"
"""The web page's static files (``beamclaw_gateway.ui``): served from memory, needing no
token and reaching nothing behind the gateway, so they are not counted like API calls
(a page load fetches several files; its API calls and ``/ws`` are counted as usual)."""


def is_static(path: str) -> bool:
    return path == STATIC_PREFIX or path.startswith(STATIC_PREFIX + "/")


class RateLimitMiddleware:
    """Counts every non-exempt HTTP request and WebSocket handshake; 429 when over.

    Exempt: ``exempt_paths`` and the web page's static files (:data:`STATIC_PREFIX`)."""

    def __init__(
        self,
        app: ASGIApp,
        limiter: RateLimiter,
        *,
        guard: TokenGuard,
        trust_forwarded_for: bool,
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.guard = guard
        self.trust_forwarded_for = trust_forwarded_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] not in ("http", "websocket")
            or not self.limiter.enabled
            or scope["path"] in self.limiter.exempt
            or (scope["type"] == "http" and is_static(scope["path"]))
        ):
            await self.app(scope, receive, send)
            return
        ip = client_ip(scope, trust_forwarded_for=self.trust_forwarded_for)
        token = bearer_token(Headers(scope=scope).get("authorization"))
        checked = token is not None and self.guard.required
        refusal = self.guard.refusal(token) if checked else None
        if checked:  # the route's token check reuses it (one resolution per request)
            scope.setdefault("state", {})[TOKEN_REFUSAL] = refusal
        decision = await self.limiter.check(*rate_subject(ip, token, refusal, checked=checked))
        headers = decision.headers() if decision.limit else {}
        if not decision.allowed:
            error = ApiError(
                429,
                "rate limit exceeded; retry after the Retry-After seconds",
                type="rate_limit_error",
                code="rate_limit_exceeded",
                headers=headers,
            )
            if scope["type"] == "http":
                await send_error(send, error)
            else:
                await deny_websocket(scope, send, error)
            return
        if scope["type"] == "websocket" or not headers:
            await self.app(scope, receive, send)
            return
        raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *raw]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
