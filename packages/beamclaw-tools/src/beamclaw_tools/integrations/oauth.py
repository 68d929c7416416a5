"""Google OAuth 2.0 (authorisation code + PKCE) as pure functions.

Nothing here does I/O, reads a clock or draws randomness: entropy and ``now`` are
arguments, requests are returned as ``(url, form)`` values and responses are parsed from
decoded JSON. :mod:`beamclaw_tools.integrations.google_oauth` is the async shell.

Invariants: the verifier is 43–128 characters of the RFC 7636 alphabet; the challenge is
``BASE64URL(SHA256(verifier))`` without padding; a refresh response that omits the
refresh token keeps the previous one.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlencode

from pydantic import SecretStr

from beamclaw_tools.integrations.errors import BadResponseError, OAuthError, ReconnectRequiredError
from beamclaw_tools.integrations.tokens import StoredToken

GOOGLE_SCOPES: tuple[str, ...] = (
    "https://www.googleapis.com/auth/gmail.readonly",
    "https://www.googleapis.com/auth/calendar.readonly",
)
"""One consent covers both read-only APIs."""

CALLBACK_PATH = "/integrations/google/callback"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pkce_verifier(entropy: bytes) -> str:
    """A code verifier from at least 32 random bytes (43+ characters)."""
    if len(entropy) < 32:
        raise ValueError("a PKCE verifier needs at least 32 bytes of entropy")
    return _b64url(entropy)[:128]


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of ``verifier``."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def redirect_uri(base_url: str) -> str:
    """The callback URL the gateway serves under ``base_url``."""
    return base_url.rstrip("/") + CALLBACK_PATH


def authorization_url(
    auth_url: str,
    *,
    client_id: str,
    redirect_uri: str,
    state: str,
    challenge: str,
    scopes: tuple[str, ...] = GOOGLE_SCOPES,
) -> str:
    """The link the person opens to consent (offline access: a refresh token comes back)."""
    query = urlencode(
        {
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": " ".join(scopes),
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "access_type": "offline",
            "prompt": "consent",
            "include_granted_scopes": "true",
        }
    )
    separator = "&" if "?" in auth_url else "?"
    return f"{auth_url}{separator}{query}"


def code_exchange_form(
    *, code: str, verifier: str, client_id: str, client_secret: str | None, redirect_uri: str
) -> dict[str, str]:
    """The form posted to the token endpoint to trade the code for tokens."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "client_id": client_id,
        "redirect_uri": redirect_uri,
    }
    if client_secret:
        form["client_secret"] = client_secret
    return form


def refresh_form(
    *, refresh_token: str, client_id: str, client_secret: str | None
) -> dict[str, str]:
    """The form posted to the token endpoint to get a fresh access token."""
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    if client_secret:
        form["client_secret"] = client_secret
    return form


def token_from_response(
    status: int, body: Any, *, now: float, previous: StoredToken | None = None
) -> StoredToken:
    """A :class:`StoredToken` from the token endpoint's decoded answer.

    Raises :class:`ReconnectRequiredError` for ``invalid_grant`` on a refresh (revoked or
    expired refresh token), :class:`OAuthError` for other OAuth errors and
    :class:`BadResponseError` when the answer is not the documented shape.
    """
    if not isinstance(body, Mapping):
        raise BadResponseError("google", f"token endpoint answered HTTP {status} without JSON")
    data = cast(Mapping[str, Any], body)
    error = data.get("error")
    if status >= 400 or error is not None:
        described = str(error or f"HTTP {status}")
        detail = data.get("error_description")
        if detail:
            described += f": {detail}"
        if previous is not None and error == "invalid_grant":
            raise ReconnectRequiredError("google", described)
        raise OAuthError("google", f"google refused the authorisation ({described})")
    access = data.get("access_token")
    if not isinstance(access, str) or not access:
        raise BadResponseError("google", "token response has no access_token")
    expires_in = data.get("expires_in")
    expires_at = now + float(expires_in) if isinstance(expires_in, int | float) else None
    refresh = data.get("refresh_token")
    refresh_token = SecretStr(refresh) if isinstance(refresh, str) and refresh else None
    if refresh_token is None and previous is not None:
        refresh_token = previous.refresh_token
    scope = data.get("scope")
    scopes = (
        tuple(scope.split()) if isinstance(scope, str) else (previous.scopes if previous else ())
    )
    return StoredToken(
        service="google",
        access_token=SecretStr(access),
        refresh_token=refresh_token,
        expires_at=expires_at,
        scopes=scopes,
        obtained_at=now,
        account=previous.account if previous else None,
    )


def needs_refresh(token: StoredToken, *, now: float, margin: float) -> bool:
    """True when the access token expires within ``margin`` seconds (or already has)."""
    return token.expires_at is not None and token.expires_at - margin <= now
