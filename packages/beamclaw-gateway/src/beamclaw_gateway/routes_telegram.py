"""``POST /webhook/telegram``: Telegram's webhook (``mode = "webhook"``).

Mounted before the generic ``/webhook/{source}``, so ``telegram`` is never a generic
source. Invariants (fail closed): without a running Telegram channel in webhook mode the
route is 404; the ``X-Telegram-Bot-Api-Secret-Token`` header must equal
``webhook_secret`` (constant-time compare) or the answer is 401; 200 means the update is
stored (a crash after it loses nothing, and Telegram's redelivery is dropped as a
duplicate); 503 while the channel is (re)starting makes Telegram deliver it again.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of
from beamclaw_obs import EventType, MissingSecretError, emit

router = APIRouter(tags=["webhooks"])

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name


@router.post(
    "/webhook/telegram",
    responses=error_responses(400, 401, 404, 413, 429, 503),
    openapi_extra={
        "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}
    },
)
async def telegram_webhook(request: Request) -> JSONResponse:
    """Receive one update from Telegram."""
    channel = services_of(request).telegram
    if channel is None or channel.settings.mode != "webhook":
        raise ApiError(404, "the Telegram channel is not in webhook mode", code="unknown_source")
    secret = channel.settings.webhook_secret
    try:
        expected = secret.resolve("the Telegram webhook secret") if secret is not None else None
    except MissingSecretError:
        expected = None
    presented = request.headers.get(SECRET_HEADER, "")
    if expected is None or not hmac.compare_digest(presented.encode(), expected.encode()):
        emit(EventType.AUTH_FAILED, credential="webhook_secret", source="telegram")
        raise ApiError(401, "missing or invalid Telegram secret token", type="authentication_error")
    if not channel.ready.is_set():
        raise ApiError(503, "the Telegram channel is starting", type="api_error", code="not_ready")
    try:
        payload: Any = json.loads(await request.body())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, "the body is not JSON") from exc
    if not isinstance(payload, dict) or not await channel.receive_webhook(payload):  # pyright: ignore[reportUnknownArgumentType]
        raise ApiError(400, "the body is not a Telegram update")
    return JSONResponse({"ok": True})
