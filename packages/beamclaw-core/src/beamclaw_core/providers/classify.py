"""Error classification (Bedrock ErrorKind): HTTP status, error bodies, transport failures.

Classification only — retry decisions belong to the loop machine. Rules:

* 401/403 → AUTH; 429 → RATE_LIMIT carrying ``Retry-After`` (seconds, HTTP date or
  ``retry-after-ms``); 408, 409, 5xx and 529 → NETWORK; 400/404/413/422 → INVALID_REQUEST,
  except recognised context-length errors → CONTEXT_OVERFLOW; anything else → UNKNOWN.
* In-stream error objects are classified by their ``type``/``code``
  (Anthropic ``overloaded_error``, OpenAI ``context_length_exceeded`` …).
* Transport failures (timeouts, refused or reset connections, truncated bodies) arrive
  already as :class:`~beamclaw_core.providers.base.UpstreamError` (NETWORK) from the
  upstream seam, translated there from httpx or aiohttp; nothing here knows either.

Messages are extracted from the provider's error body, scrubbed, stripped of the literal
API key and truncated: they are safe to show and to log.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from typing import Any

import orjson

from beamclaw_core.providers.base import ErrorKind, ProviderError
from beamclaw_obs import REDACTED, scrub

MAX_MESSAGE_CHARS = 300

_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|context length|context window"
    r"|prompt is too long|too many tokens|input is too long|exceeds? the (?:model'?s? )?"
    r"(?:maximum|max) (?:context|input)|reduce the length of the messages"
    r"|input tokens exceed|string too long",
    re.IGNORECASE,
)

_TYPE_KINDS: dict[str, ErrorKind] = {
    "authentication_error": ErrorKind.AUTH,
    "permission_error": ErrorKind.AUTH,
    "invalid_api_key": ErrorKind.AUTH,
    "rate_limit_error": ErrorKind.RATE_LIMIT,
    "rate_limit_exceeded": ErrorKind.RATE_LIMIT,
    "insufficient_quota": ErrorKind.RATE_LIMIT,
    "overloaded_error": ErrorKind.NETWORK,
    "api_error": ErrorKind.NETWORK,
    "server_error": ErrorKind.NETWORK,
    "timeout_error": ErrorKind.NETWORK,
    "invalid_request_error": ErrorKind.INVALID_REQUEST,
    "not_found_error": ErrorKind.INVALID_REQUEST,
    "request_too_large": ErrorKind.INVALID_REQUEST,
    "context_length_exceeded": ErrorKind.CONTEXT_OVERFLOW,
}


def is_context_overflow(text: str) -> bool:
    """True when an error text says the prompt did not fit the model's context."""
    return bool(_OVERFLOW.search(text))


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def safe_text(text: str, secret: str | None = None, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` scrubbed, without ``secret``, on one line, at most ``limit`` characters."""
    if secret:
        text = text.replace(secret, REDACTED)
    text = " ".join(scrub(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_fields(body: Any) -> tuple[str | None, str | None]:
    """``(type_or_code, message)`` from an OpenAI/Anthropic/other error JSON value."""
    if not isinstance(body, dict):
        return None, None
    data: dict[str, Any] = dict(body)  # pyright: ignore[reportUnknownArgumentType]
    inner = data.get("error", data)
    if isinstance(inner, str):
        return None, inner
    if not isinstance(inner, dict):
        return None, None
    err: dict[str, Any] = dict(inner)  # pyright: ignore[reportUnknownArgumentType]
    code = err.get("code")
    etype = err.get("type")
    kind = code if isinstance(code, str) and code in _TYPE_KINDS else etype
    message = err.get("message")
    return (
        kind if isinstance(kind, str) else None,
        message if isinstance(message, str) else None,
    )


def describe_body(text: str, secret: str | None = None) -> tuple[str | None, str]:
    """``(type_or_code, safe message)`` from a raw error body (JSON or not)."""
    try:
        etype, message = error_fields(json.loads(text))
    except ValueError:
        etype, message = None, None
    shown = message if message else (text.strip() or "(empty body)")
    return etype, safe_text(shown, secret)


def kind_for_status(status: int, etype: str | None, message: str) -> ErrorKind:
    """The :class:`ErrorKind` of an HTTP error response."""
    if etype == "context_length_exceeded" or (
        status in (400, 404, 413, 422) and is_context_overflow(message)
    ):
        return ErrorKind.CONTEXT_OVERFLOW
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (408, 409) or status >= 500:
        return ErrorKind.NETWORK
    if status in (400, 404, 413, 422):
        return ErrorKind.INVALID_REQUEST
    return ErrorKind.UNKNOWN


def kind_for_error_type(etype: str | None, message: str) -> ErrorKind:
    """The :class:`ErrorKind` of an error object received inside a stream."""
    if is_context_overflow(message):
        return ErrorKind.CONTEXT_OVERFLOW
    if etype is None:
        return ErrorKind.UNKNOWN
    return _TYPE_KINDS.get(etype, ErrorKind.UNKNOWN)


def stream_json_object(
    data: str, *, provider: str, model: str | None, secret: str | None = None
) -> dict[str, Any] | None:
    """Decode one streamed event's JSON payload.

    Returns the object, or None for valid JSON that is not an object (ignored by both
    wires). Undecodable text is a :class:`ProviderError` of kind UNKNOWN whose message
    quotes the start of the payload with ``secret`` masked.
    """
    try:
        value = orjson.loads(data)  # 5-10x json.loads: every streamed event passes here
    except ValueError as e:
        raise ProviderError(
            ErrorKind.UNKNOWN,
            f"invalid JSON in the stream: {safe_text(data, secret, 120)}",
            provider=provider,
            model=model,
        ) from e
    if not isinstance(value, dict):
        return None
    return dict(value)  # pyright: ignore[reportUnknownArgumentType]
