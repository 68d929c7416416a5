"""``POST /webhook/{source}``: generic webhooks, fire-and-forget (202).

Invariants (fail closed): a source not configured under ``[gateway.webhooks.<source>]``
is 404; a missing, wrong or unresolvable secret is 401; the secret is compared in
constant time and removed from the payload before the agent sees it. The payload becomes
the user message, under a one-line header naming the source; the turn runs in the
background (its answer is persisted in the session and sent to its subscribers).
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from loguru import logger
from pydantic import BaseModel

from beamclaw_core.conversation import TurnRequest
from beamclaw_core.sessions import SessionAddress
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import GatewayServices
from beamclaw_gateway.settings import WebhookSourceSettings
from beamclaw_obs import EventType, MissingSecretError, emit

router = APIRouter(tags=["webhooks"])


class WebhookAccepted(BaseModel):
    accepted: bool = True
    source: str
    agent: str
    session_id: str
    turn_id: str


def _unauthorized(source: str) -> ApiError:
    emit(EventType.AUTH_FAILED, credential="webhook_secret", source=source)
    return ApiError(401, "missing or invalid webhook secret", type="authentication_error")


def _presented(config: WebhookSourceSettings, request: Request, payload: Any) -> str | None:
    if config.header:
        value = request.headers.get(config.header)
        if value:
            return value
    if config.body_field and isinstance(payload, dict):
        value = payload.get(config.body_field)  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
        if isinstance(value, str):
            return value
    return None


def webhook_message(source: str, payload: Any) -> str:
    """The user message an event becomes: a header line naming the source, then the body."""
    if isinstance(payload, str):
        body = payload
    else:
        body = json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True)
    return f"[Webhook event from {source!r}]\n{body}"


@router.post(
    "/webhook/{source}",
    status_code=202,
    response_model=WebhookAccepted,
    responses=error_responses(400, 401, 404, 413, 429),
    openapi_extra={
        "requestBody": {
            "content": {
                "application/json": {"schema": {"type": "object"}},
                "text/plain": {"schema": {"type": "string"}},
            }
        }
    },
)
async def webhook(
    request: Request,
    source: str = Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$"),
    agent: str | None = Query(default=None, max_length=128),
) -> JSONResponse:
    """Accept an event from a configured sender and run a turn with it in the background."""
    services: GatewayServices = request.app.state.services
    config = services.settings.webhooks.get(source)
    if config is None:
        raise ApiError(404, f"unknown webhook source {source!r}", code="unknown_source")
    raw = await request.body()
    text = raw.decode("utf-8", errors="replace")
    payload: Any
    try:
        payload = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        payload = text
    try:
        expected = config.secret.resolve(f"webhook {source}")
    except MissingSecretError:
        logger.warning("webhook {}: its secret is not set; refusing", source)
        raise _unauthorized(source) from None
    presented = _presented(config, request, payload)
    if presented is None or not hmac.compare_digest(presented.encode(), expected.encode()):
        raise _unauthorized(source)
    if config.body_field and isinstance(payload, dict):
        payload.pop(config.body_field, None)  # pyright: ignore[reportUnknownMemberType]
    agent_id = services.agents.resolve(agent or config.agent)
    if agent_id is None:
        raise ApiError(404, f"no agent {agent or config.agent!r}", code="unknown_agent")
    user = config.user or f"webhook:{source}"
    turn = await services.conversation.send(
        TurnRequest(
            address=SessionAddress(user, agent_id, "webhook"),
            content=webhook_message(source, payload),
            approval_mode="deny",
            drafts=False,
        )
    )
    emit(EventType.WEBHOOK_RECEIVED, source=source, agent=agent_id, session_id=turn.session_id)
    body = WebhookAccepted(
        source=source, agent=agent_id, session_id=turn.session_id, turn_id=turn.turn_id
    )
    return JSONResponse(body.model_dump(), status_code=202)
