"""``/v1``: the OpenAI-compatible API (chat completions, models).

Invariants: the answer is the whole turn (tool steps included); the turn runs detached
from the request (``LocalConversation``), so a client that disconnects mid-stream loses nothing; an
``Idempotency-Key`` answers a retry from the stored first answer; every error has the
OpenAI shape ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal, cast

import orjson
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.datastructures import Headers

from beamclaw_core import agent_profile
from beamclaw_core.attachments import AttachmentError
from beamclaw_core.conversation import Turn, TurnRequest
from beamclaw_core.loop import TextChunk
from beamclaw_core.sessions import SessionAddress, TurnResult
from beamclaw_gateway.auth import bearer_token, token_key
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.idempotency import StoredAnswer, fingerprint, scoped_key, turn_ref
from beamclaw_gateway.openai_models import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    CompletionUsage,
    ModelCard,
    ModelList,
    error_responses,
    last_user_content,
)
from beamclaw_gateway.services import services_of
from beamclaw_gateway.storage_errors import RETRY_FULL_SECONDS

router = APIRouter(prefix="/v1", tags=["openai"], dependencies=[Depends(require_token)])

_UPSTREAM_STATUS = {
    "timeout": 504,
    "rate_limit": 429,
    "context_overflow": 400,
    "storage_unavailable": 503,  # the database kept refusing the turn's writes
}


def api_user_id(user: str | None, owner: str) -> str:
    """``api:<user>``; an id already carrying a channel prefix is kept; no user at all is
    the gateway's ``owner`` (the person the TUI speaks as, so both share one history)."""
    if not user:
        return owner
    return user if ":" in user else f"api:{user}"


def render(result: TurnResult, model: str, created: int) -> StoredAnswer:
    """The non-streaming answer (status and body) for a finished turn."""
    if result.status == "completed":
        body = ChatCompletion.body(
            f"chatcmpl-{result.turn_id}",
            created,
            model,
            result.text,
            result.finish_reason,
            result.usage,
        )
        return StoredAnswer(200, body)
    return StoredAnswer(_error_status(result), _turn_error(result).body())


def _error_status(result: TurnResult) -> int:
    if result.status in ("cancelled", "dropped"):
        return 409
    return _UPSTREAM_STATUS.get(result.error_kind or "", 502)


def _turn_error(result: TurnResult) -> ApiError:
    if result.status == "cancelled":
        return ApiError(
            409, f"the turn was cancelled: {result.error_message}", code="turn_cancelled"
        )
    if result.status == "dropped":
        return ApiError(409, f"the message never ran: {result.error_message}", code="turn_dropped")
    status = _error_status(result)
    return ApiError(
        status,
        result.error_message or "the turn failed",
        # docs/api.md: a 429 is a ``rate_limit_error``, the upstream's after retries too
        type="rate_limit_error" if status == 429 else "api_error",
        code=result.error_kind,
    )


@router.get("/models", response_model=ModelList, responses=error_responses(401, 429))
async def list_models(request: Request) -> ModelList:
    """One model per agent: ``beamclaw/<agent>`` (the default agent first), with the
    provider and model its turns use (``[agents.<id>]``, else ``[core]``)."""
    services = services_of(request)
    created = int(time.time() - services.runtime.uptime_seconds)
    config = services.runtime.config
    cards: list[ModelCard] = []
    for agent in services.agents.ids():
        profile = agent_profile(config.core, config.agents, agent)
        cards.append(
            ModelCard(
                id=f"beamclaw/{agent}",
                created=created,
                upstream_provider=profile.provider,
                upstream_model=profile.model(config.core),
            )
        )
    return ModelList(data=cards)


def _sse(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


class _ChunkWriter:
    def __init__(self, completion_id: str, model: str, created: int, include_usage: bool) -> None:
        self.base: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
        }
        self.include_usage = include_usage

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        data = {
            **self.base,
            "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            ],
        }
        if self.include_usage:
            data["usage"] = None
        return _sse(data)

    def usage(self, usage: dict[str, Any]) -> bytes:
        return _sse({**self.base, "choices": [], "usage": usage})


async def _stream_turn(turn: Turn, writer: _ChunkWriter) -> AsyncIterator[bytes]:
    yield writer.chunk({"role": "assistant", "content": ""})
    streamed: list[str] = []
    async for event in turn.events():
        if isinstance(event, TextChunk) and event.text:
            streamed.append(event.text)
            yield writer.chunk({"content": event.text})
    result = await turn.result()
    if result.status != "completed":
        yield _sse(_turn_error(result).body())
        yield _sse("[DONE]")
        return
    sent = "".join(streamed)
    if result.text.startswith(sent) and len(result.text) > len(sent):
        yield writer.chunk({"content": result.text[len(sent) :]})
    yield writer.chunk({}, result.finish_reason)
    if writer.include_usage:
        yield writer.usage(CompletionUsage.body(result.usage))
    yield _sse("[DONE]")


async def _replay_stream(answer: StoredAnswer, writer: _ChunkWriter) -> AsyncIterator[bytes]:
    if answer.status_code != 200:
        yield _sse(answer.body)
        yield _sse("[DONE]")
        return
    completion = ChatCompletion.model_validate(answer.body)
    choice = completion.choices[0]
    yield writer.chunk({"role": "assistant", "content": ""})
    if choice.message.content:
        yield writer.chunk({"content": choice.message.content})
    yield writer.chunk({}, choice.finish_reason)
    if writer.include_usage:
        yield writer.usage(completion.usage.model_dump(mode="json"))
    yield _sse("[DONE]")


_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@dataclass(frozen=True, slots=True)
class _HeaderParam:
    name: str
    description: str
    max_length: int | None = None
    choices: tuple[str, ...] = ()

    def read(self, headers: Headers) -> str | None:
        """The header's value (None when absent); :class:`ApiError` 400 when invalid."""
        value = headers.get(self.name)
        if value is None:
            return None
        param = f"header.{self.name.lower()}"
        if self.max_length is not None and len(value) > self.max_length:
            raise ApiError(
                400,
                f"{param}: String should have at most {self.max_length} characters",
                param=param,
            )
        if self.choices and value not in self.choices:
            allowed = " or ".join(repr(c) for c in self.choices)
            raise ApiError(400, f"{param}: Input should be {allowed}", param=param)
        return value

    def openapi(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "string"}
        if self.max_length is not None:
            schema["maxLength"] = self.max_length
        if self.choices:
            schema["enum"] = list(self.choices)
        return {
            "name": self.name,
            "in": "header",
            "required": False,
            "description": self.description,
            "schema": schema,
        }


# Read by the handler itself rather than declared as FastAPI ``Header`` parameters:
# resolving four header parameters through FastAPI's dependency solver cost ~0.15 ms a
# request. They are declared in the OpenAPI document all the same.
_USER = _HeaderParam("X-User-Id", "The user; wins over the body's `user`.", 256)
_SESSION = _HeaderParam("X-Session-Id", "The session (else `session_id`, else derived).", 128)
_IDEMPOTENCY = _HeaderParam(
    "Idempotency-Key", "A retry with the same key answers from the first answer.", 256
)
_APPROVAL = _HeaderParam(
    "X-Approval-Mode",
    "What happens to tool approvals: `deny` answers no, `wait` waits for an approver.",
    choices=("deny", "wait"),
)
_HEADER_PARAMS = (_USER, _SESSION, _IDEMPOTENCY, _APPROVAL)


class _OrjsonResponse(JSONResponse):
    """A JSON response rendered with orjson (several times faster than ``json.dumps``).

    Not FastAPI's ``ORJSONResponse``: it is deprecated (FastAPI prefers a response model,
    which these hand-built bodies bypass on purpose)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        200: {
            "description": "The whole turn's answer; with `stream: true` an SSE stream of "
            "`chat.completion.chunk` objects ending with `data: [DONE]`.",
            "content": {"text/event-stream": {"schema": ChatCompletionChunk.model_json_schema()}},
        },
        **error_responses(400, 401, 404, 409, 413, 429, 502, 503, 504),
    },
    openapi_extra={"parameters": [p.openapi() for p in _HEADER_PARAMS]},
)
async def chat_completions(request: Request, body: ChatCompletionRequest) -> Any:
    """Send the last user message to the agent named by ``model``; answer with the turn.

    ``model`` is ``beamclaw/<agent>`` or the agent id. The user comes from ``X-User-Id``,
    else ``user``; the session from ``X-Session-Id``/``session_id`` or is derived from
    user and agent. Only the last user message is taken: the history lives in the
    session. ``X-Approval-Mode`` (``deny``/``wait``) says what happens to tool approvals.
    """
    headers = request.headers
    x_user_id = _USER.read(headers)
    x_session_id = _SESSION.read(headers)
    idempotency_key = _IDEMPOTENCY.read(headers)
    x_approval_mode = cast("Literal['deny', 'wait'] | None", _APPROVAL.read(headers))
    services = services_of(request)
    agent = services.agents.resolve(body.model)
    if agent is None:
        raise ApiError(
            404,
            f"The model `{body.model}` does not exist",
            code="model_not_found",
            param="model",
        )
    try:
        content = last_user_content(body, services.runtime.config.core.attachments.limits())
    except ValueError as exc:
        raise ApiError(400, str(exc), param="messages") from exc
    if content is None:
        raise ApiError(400, "messages must contain a non-empty user message", param="messages")
    created = int(time.time())
    include_usage = bool(body.stream_options and body.stream_options.include_usage)
    address = SessionAddress(api_user_id(x_user_id or body.user, services.owner), agent, "api")
    session_id = x_session_id or body.session_id
    key: str | None = None
    if idempotency_key:
        token = bearer_token(headers.get("authorization"))
        key = scoped_key(token_key(token) if token else None, idempotency_key)
        claim = await services.idempotency.claim(
            key,
            fingerprint(await request.body()),
            session_id=session_id or services.conversation.core.session_id(address),
            model=body.model,
        )
        if claim.kind == "mismatch":
            raise ApiError(
                409,
                "this Idempotency-Key was used with a different request",
                code="idempotency_key_reused",
            )
        if claim.kind == "busy":
            raise ApiError(
                409,
                "a request with this Idempotency-Key is still running",
                code="idempotency_in_progress",
            )
        if claim.answer is not None:
            answer = claim.answer
            if body.stream:
                writer = _ChunkWriter(
                    str(answer.body.get("id", "chatcmpl-replay")),
                    body.model,
                    created,
                    include_usage,
                )
                return StreamingResponse(
                    _replay_stream(answer, writer),
                    media_type="text/event-stream",
                    headers={**_SSE_HEADERS, "Idempotent-Replayed": "true"},
                )
            return _OrjsonResponse(
                answer.body, answer.status_code, headers={"Idempotent-Replayed": "true"}
            )

    async def remember(result: TurnResult) -> None:
        if key is not None:
            await services.idempotency.finish(
                key, render(result, body.model, created), result.session_id
            )

    turn_request = TurnRequest(
        address=address,
        content=content,
        session_id=session_id,
        approval_mode=x_approval_mode or services.approval_mode(address.agent_id),
        source_message_id=turn_ref(key) if key is not None else None,
        drafts=bool(body.stream),
    )
    try:
        turn = await services.conversation.send(turn_request, on_done=remember)
    except BaseException as exc:
        if key is not None:
            await services.idempotency.abandon(key)
        if isinstance(exc, AttachmentError):
            raise ApiError(400, str(exc), param="messages") from exc
        raise
    if key is not None:
        await services.idempotency.started(key, turn.turn_id)
    headers = {"X-Session-Id": turn.session_id}
    if body.stream:
        writer = _ChunkWriter(f"chatcmpl-{turn.turn_id}", body.model, created, include_usage)
        return StreamingResponse(
            _stream_turn(turn, writer),
            media_type="text/event-stream",
            headers={**_SSE_HEADERS, **headers},
        )
    answer = render(await turn.result(), body.model, created)
    if answer.status_code == 503:
        headers["Retry-After"] = str(RETRY_FULL_SECONDS)
    return _OrjsonResponse(answer.body, answer.status_code, headers=headers)
