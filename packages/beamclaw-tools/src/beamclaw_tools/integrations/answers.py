"""Reading an API's answer: pure decisions on status, body and headers.

:func:`decode_answer` turns one HTTP answer into the decoded JSON object or the
:class:`~beamclaw_tools.integrations.errors.IntegrationError` the person can act on.
Google and Notion report errors by status (``{"error": {...}}`` / ``{"object": "error"}``);
Slack answers 200 with ``{"ok": false, "error": "..."}``. 401 and the Slack auth errors
mean "reconnect"; 429 (or Slack's ``ratelimited``) is a value, :class:`RetryLater`,
the caller's to retry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from beamclaw_tools.integrations.errors import (
    BadResponseError,
    ReconnectRequiredError,
    ServiceError,
)

SLACK_AUTH_ERRORS = frozenset(
    {
        "not_authed",
        "invalid_auth",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "no_permission",
        "missing_scope",
        "not_allowed_token_type",
    }
)


@dataclass(frozen=True)
class RetryLater:
    """The answer was a rate limit: try again after ``retry_after`` seconds (if given)."""

    retry_after: float | None


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (HTTP dates are not honoured: None)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(seconds, 0.0)


def _detail(data: Mapping[str, Any], fallback: str) -> str:
    error = data.get("error")
    if isinstance(error, Mapping):
        message = cast(Mapping[str, Any], error).get("message")
        if isinstance(message, str):
            return message[:300]
    for key in ("message", "error_description", "error"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value[:300]
    return fallback


def decode_answer(
    service: str, status: int, text: str, retry_after: str | None
) -> dict[str, Any] | RetryLater:
    """The JSON object of a successful answer, :class:`RetryLater` for a rate limit (429
    or Slack's ``ratelimited``: the caller decides whether to wait); raises the error any
    other failure means.

    Raises:
        ReconnectRequiredError: 401, or a Slack auth error.
        ServiceError: any other error status.
        BadResponseError: a success whose body is not a JSON object.
    """
    if status == 429:
        return RetryLater(retry_after_seconds(retry_after))
    try:
        decoded: Any = json.loads(text) if text.strip() else None
    except ValueError:
        decoded = None
    data = cast(Mapping[str, Any], decoded) if isinstance(decoded, Mapping) else None
    if status == 401:
        raise ReconnectRequiredError(service, _detail(data or {}, "HTTP 401 unauthorised"))
    if status == 403 and "insufficient authentication scopes" in text.lower():
        # Google: the grant lacks a scope (consent narrowed, or an older grant)
        raise ReconnectRequiredError(service, _detail(data or {}, "insufficient scopes"))
    if status >= 400:
        raise ServiceError(service, status, _detail(data or {}, text.strip()[:200] or "no detail"))
    if data is None:
        shown = text.strip()[:80]
        raise BadResponseError(service, f"expected a JSON object, got {shown!r}")
    if service == "slack" and data.get("ok") is not True:
        error = str(data.get("error") or "ok=false without an error")
        if error == "ratelimited":
            return RetryLater(retry_after_seconds(retry_after))
        if error in SLACK_AUTH_ERRORS:
            raise ReconnectRequiredError(service, error)
        raise ServiceError(service, status, error)
    return dict(data)
