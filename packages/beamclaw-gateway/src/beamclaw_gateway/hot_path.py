"""``POST /v1/chat/completions`` without FastAPI's per-request machinery, when it is not
needed: every turn a client sends through the OpenAI-compatible API takes this path.

FastAPI routes a request through its exception and exit-stack middleware, its router
(the route's pattern among all of them), its dependency solver (the token scheme, the
``Request``, the body parsed with ``json`` then validated) before its handler runs:
≈ 0.5 ms of a turn on the reference machine (docs/api.md). :class:`ChatCompletionsHotPath`
sits inside the request middleware (rate limit and body limit have run) and, for a request
that is authorized and whose JSON body is a valid ``ChatCompletionRequest``, calls the
route's own handler (``routes_openai.chat_completions``) with the body validated in one
pass from its bytes (``model_validate_json``), maps the handler's errors through the API's
own exception handlers, and sends its response.

Invariant: the answer is the one FastAPI's route gives. Anything else — another path or
method, a refused or missing token, a body that is not JSON or not valid, a content type
FastAPI would not parse as JSON — goes to FastAPI with the body replayed, and FastAPI
answers it as ever (its 400/401/422 wording, its ``auth_failed`` event).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from beamclaw_gateway.openai_models import ChatCompletionRequest
from beamclaw_gateway.routes_openai import chat_completions
from beamclaw_gateway.routes_openai import router as openai_router
from beamclaw_gateway.services import GatewayServices

__all__ = ["HOT_METHOD", "HOT_PATH", "HOT_ROUTER", "ChatCompletionsHotPath", "Handler"]

HOT_METHOD = "POST"
HOT_PATH = "/v1/chat/completions"
HOT_ROUTER = openai_router
"""The router whose route the hot path serves (an API without it has no hot path)."""

Handler = Callable[[Request, Exception], Response]

_HOT_ROUTE = next(
    r
    for r in openai_router.routes
    if isinstance(r, APIRoute) and r.path == HOT_PATH and HOT_METHOD in (r.methods or ())
)


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of header ``name`` (lower case), as Starlette's ``Headers.get``."""
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def _json_content(content_type: str | None) -> bool:
    """The body is parsed as JSON by FastAPI and here alike: ``application/json``
    (parameters allowed). FastAPI answers the rest (no content type: a 400; other
    ``+json`` types)."""
    if content_type is None:
        return False
    return content_type.partition(";")[0].strip().lower() == "application/json"


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":  # a client gone before its body came
            raise _ClientGoneError
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class _ClientGoneError(Exception):
    """The client disconnected while its body was read."""


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` whose first message is the whole ``body`` (read already)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


class ChatCompletionsHotPath:
    """The hot path in front of ``app`` (FastAPI's stack); ``handlers``: the API's own
    exception handlers, by exception class (see the module)."""

    def __init__(self, app: ASGIApp, handlers: Mapping[type[Exception], Handler]) -> None:
        self.app = app
        self._handlers = tuple(handlers.items())
        self.served = 0
        """Requests this path answered itself (the rest went to FastAPI)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != HOT_PATH
            or scope["method"] != HOT_METHOD
            or not self._authorized(scope)
        ):
            await self.app(scope, receive, send)
            return
        if not _json_content(_header(scope, b"content-type")):
            await self.app(scope, receive, send)
            return
        try:
            raw = await _read_body(receive)
        except _ClientGoneError:
            return  # nobody to answer
        replay = _replaying(raw, receive)
        try:
            body = ChatCompletionRequest.model_validate_json(raw)
        except ValidationError:  # FastAPI words the 400 (and parses JSON its own way)
            await self.app(scope, replay, send)
            return
        scope["route"] = _HOT_ROUTE  # as routing sets it (the ``http_request`` event's route)
        request = Request(scope, replay)
        self.served += 1
        try:
            response: Response = await chat_completions(request, body)
        except Exception as exc:
            handler = self._handler(exc)
            if handler is None:
                raise
            response = handler(request, exc)
        await response(scope, replay, send)

    def _authorized(self, scope: Scope) -> bool:
        """The token check of ``Depends(require_token)``, without its refusal (FastAPI
        refuses, and reports it once)."""
        services: GatewayServices = scope["app"].state.services
        authorization = _header(scope, b"authorization")
        return services.auth.request_refusal(scope.get("state", {}), authorization) is None

    def _handler(self, exc: Exception) -> Handler | None:
        for kind, handler in self._handlers:
            if isinstance(exc, kind):
                return handler
        return None
