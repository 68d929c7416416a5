"""Bearer-token authentication (DESIGN.md section 7).

Invariants: the presented token is compared with :func:`hmac.compare_digest` (constant
time); a configured token whose environment variable is unset rejects every request
(fail closed); with no token configured (loopback only, see ``check_bind_policy``) every
request is allowed.
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import Request
from fastapi.security import HTTPBearer

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
        """True when ``presented`` is the configured token (or none is configured)."""
        if self._secret is None:
            return True
        if not presented:
            return _refused("missing")
        try:
            expected = self._secret.resolve("gateway token")
        except MissingSecretError:
            return _refused("unresolved")
        return hmac.compare_digest(presented.encode(), expected.encode()) or _refused("invalid")


def _refused(reason: str) -> bool:
    """A token was refused: the ``auth_failed`` event (never the token), then False."""
    emit(EventType.AUTH_FAILED, credential="gateway_token", reason=reason)
    return False


def unauthorized(message: str = "missing or invalid gateway token") -> ApiError:
    return ApiError(
        401,
        message,
        type="authentication_error",
        code="invalid_api_key",
        headers={"WWW-Authenticate": "Bearer"},
    )


class _GatewayBearer(HTTPBearer):
    """The bearer security scheme that also checks the token.

    One dependency where a scheme plus a checking dependency took two: FastAPI's solver
    cost ~0.1 ms a request per level. Subclassing ``HTTPBearer`` keeps the scheme in the
    OpenAPI document (``components.securitySchemes.HTTPBearer``, ``security`` on each
    guarded operation)."""

    async def __call__(self, request: Request) -> None:  # type: ignore[override]
        guard: TokenGuard = request.app.state.services.auth
        if not guard.check(bearer_token(request.headers.get("authorization"))):
            raise unauthorized()


require_token = _GatewayBearer(
    auto_error=False, scheme_name="HTTPBearer", description="The gateway token."
)
"""FastAPI dependency guarding ``/v1``, ``/api`` and ``/a2a`` (``Depends(require_token)``)."""
