"""The outermost gateway middleware: a request id on everything, JSON for the unforeseen.

Invariants: every HTTP response carries ``X-Request-Id`` (the client's own when it is
sane, else a fresh uuid4 hex); every log line written while the request runs carries
it as loguru ``extra["request_id"]`` (``logger.contextualize``), and handlers read it
from ``request.state.request_id``. An exception that escapes the app before the
response started is logged with the id and answered as an OpenAI-shaped JSON 500 whose
body names no exception, traceback or secret — or, for a database locked, full or failing
(:mod:`~beamclaw_gateway.storage_errors`), a 503 ``storage_unavailable`` with
``Retry-After``. It is a plain ASGI app placed inside
Starlette's ``ServerErrorMiddleware``, which would otherwise answer plain text.
"""

from __future__ import annotations

import re
import uuid

from loguru import logger
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.middleware import send_error
from beamclaw_gateway.storage_errors import storage_unavailable
from beamclaw_memory import DatabaseUnavailableError, StorageUnavailableError

REQUEST_ID_HEADER = "X-Request-Id"
_SANE_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")


def request_id_of(presented: str | None) -> str:
    """The client's id when it is 1-128 characters of ``[A-Za-z0-9._:-]``, else a new one."""
    if presented is not None and _SANE_ID.fullmatch(presented):
        return presented
    return uuid.uuid4().hex


def internal_error() -> ApiError:
    """What a client sees of an unforeseen failure (details stay in the log)."""
    return ApiError(
        500,
        "internal server error; the X-Request-Id header identifies it in the gateway log",
        type="api_error",
        code="internal_error",
    )


class RequestContextMiddleware:
    """Gives each request an id (header, log context, ``request.state``) and turns an
    escaped exception into a JSON 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        rid = request_id_of(Headers(scope=scope).get(REQUEST_ID_HEADER))
        scope.setdefault("state", {})["request_id"] = rid
        header = (REQUEST_ID_HEADER.lower().encode(), rid.encode())
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] in ("http.response.start", "websocket.http.response.start"):
                started = True
                message = {**message, "headers": [*message.get("headers", []), header]}
            await send(message)

        with logger.contextualize(request_id=rid):
            try:
                await self.app(scope, receive, send_with_id)
            except (StorageUnavailableError, DatabaseUnavailableError) as exc:
                logger.warning(
                    "{} {} (request {}): {}", scope.get("method", "WS"), scope["path"], rid, exc
                )
                if started or scope["type"] != "http":
                    raise
                await send_error(send_with_id, storage_unavailable(exc))
            except Exception:
                logger.exception(
                    "unhandled error in {} {} (request {})",
                    scope.get("method", "WS"),
                    scope["path"],
                    rid,
                )
                if started or scope["type"] != "http":
                    raise
                await send_error(send_with_id, internal_error())
