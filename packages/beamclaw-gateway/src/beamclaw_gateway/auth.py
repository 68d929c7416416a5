"""Bearer-token authentication (DESIGN.md section 7).

Invariants: the presented token is compared with :func:`hmac.compare_digest` (constant
time); a configured token whose environment variable is unset rejects every request
(fail closed); with no token configured (loopback only, see ``check_bind_policy``) every
request is allowed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.settings import HttpSettings
from beamclaw_obs import EventType, MissingSecretError, emit


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else None."""
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


TOKEN_REFUSAL = "token_refusal"  # noqa: S105 - a scope key, not a secret
"""``scope["state"]`` key: the rate limiter's verdict on the presented token (a refusal
reason or None), so the route's check does not resolve the secret a second time."""


def token_key(token: str) -> str:
    """A short, non-reversible key for a token (rate-limit buckets, logs)."""
    return hashlib.sha256(token.encode()).hexdigest()[:24]


class TokenGuard:
    """Checks presented tokens against ``[gateway.http] token``."""

    def __init__(self, http: HttpSettings) -> None:
        self._secret = http.token
        self._metrics_public = http.metrics_public

    @property
    def required(self) -> bool:
        """True when a token is configured (every protected route needs it)."""
        return self._secret is not None

    @property
    def metrics_public(self) -> bool:
        return self._metrics_public or not self.required

    def check(self, presented: str | None) -> bool:
        """True when ``presented`` is the configured token (or none is configured); a
        refusal is the ``auth_failed`` event (never the token)."""
        return self.accepts(self.refusal(presented))

    @staticmethod
    def accepts(refusal: str | None) -> bool:
        """True when ``refusal`` (from :meth:`refusal`) is None; else the ``auth_failed``
        event (never the token), then False."""
        if refusal is None:
            return True
        emit(EventType.AUTH_FAILED, credential="gateway_token", reason=refusal)
        return False

    def request_refusal(self, state: Mapping[str, object], authorization: str | None) -> str | None:
        """:meth:`refusal` of a request's ``Authorization`` header, or the rate limiter's
        verdict on it when ``state`` (the request scope's) holds one (:data:`TOKEN_REFUSAL`:
        the secret is not resolved a second time). Emits nothing."""
        if TOKEN_REFUSAL in state:
            refusal = state[TOKEN_REFUSAL]
            return refusal if isinstance(refusal, str) else None
        return self.refusal(bearer_token(authorization))

    def refusal(self, presented: str | None) -> str | None:
        """Why ``presented`` is refused (``missing``, ``unresolved``, ``invalid``), or None
        when it is accepted. Emits nothing: the rate limiter classifies clients with it
        before the route's own check reports the refusal once."""
        if self._secret is None:
            return None
        if not presented:
            return "missing"
        try:
            expected = self._secret.resolve("gateway token")
        except MissingSecretError:
            return "unresolved"
        return None if hmac.compare_digest(presented.encode(), expected.encode()) else "invalid"


def unauthorized(message: str = "missing or invalid gateway token") -> ApiError:
    return ApiError(
        401,
        message,
        type="authentication_error",
        code="invalid_api_key",
        headers={"WWW-Authenticate": "Bearer"},
    )
