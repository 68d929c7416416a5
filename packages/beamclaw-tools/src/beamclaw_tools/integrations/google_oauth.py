"""The async shell of the Google OAuth flow (see :mod:`.oauth` for the pure logic).

``start`` hands out an authorisation link and remembers its PKCE verifier under a random
``state`` in the token store (so the gateway's callback finds it even when the CLI made
the link); ``complete`` trades the callback's code for tokens (a state is used once and
expires); ``refresh`` and ``revoke`` talk to the token and revocation endpoints.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import SecretStr

from beamclaw_obs import MissingSecretError
from beamclaw_tools.integrations import oauth
from beamclaw_tools.integrations.errors import (
    BadResponseError,
    OAuthError,
    ReconnectRequiredError,
)
from beamclaw_tools.integrations.settings import IntegrationsSettings
from beamclaw_tools.integrations.token_store import TokenStore
from beamclaw_tools.integrations.tokens import PendingAuthorisation, StoredToken

Clock = Callable[[], float]


class GoogleOAuth:
    """Authorisation, code exchange, refresh and revocation against Google's endpoints."""

    def __init__(
        self,
        settings: IntegrationsSettings,
        store: TokenStore,
        *,
        clock: Clock = time.time,
        entropy: Callable[[int], bytes] = os.urandom,
    ) -> None:
        self._settings = settings
        self._google = settings.google
        self._store = store
        self._clock = clock
        self._entropy = entropy

    def problem(self) -> str | None:
        """Why Google cannot be connected (missing client id/secret), or None."""
        if not self._google.client_id:
            return "no Google OAuth client is configured ([tools.integrations.google] client_id)"
        secret = self._google.client_secret
        if secret is not None and not secret.is_available():
            return f"the Google client secret is missing: {secret.problem()}"
        return None

    def _client(self) -> tuple[str, str | None]:
        problem = self.problem()
        if problem is not None or self._google.client_id is None:
            raise OAuthError("google", problem or "no Google OAuth client is configured")
        secret = self._google.client_secret
        try:
            value = secret.resolve(used_for="google oauth") if secret is not None else None
        except MissingSecretError as e:
            raise OAuthError("google", str(e)) from e
        return self._google.client_id, value

    def start(self) -> str:
        """A fresh authorisation link (its state and verifier are stored)."""
        client_id, _ = self._client()
        verifier = oauth.pkce_verifier(self._entropy(48))
        state = secrets.token_urlsafe(24)
        redirect = oauth.redirect_uri(self._settings.redirect_base_url)
        now = self._clock()
        self._store.add_pending(
            state,
            PendingAuthorisation(
                service="google",
                verifier=SecretStr(verifier),
                created_at=now,
                redirect_uri=redirect,
            ),
            now=now,
            ttl=self._settings.pending_ttl_seconds,
        )
        return oauth.authorization_url(
            self._google.auth_url,
            client_id=client_id,
            redirect_uri=redirect,
            state=state,
            challenge=oauth.pkce_challenge(verifier),
        )

    async def _post(self, url: str, form: dict[str, str]) -> tuple[int, Any]:
        try:
            async with httpx.AsyncClient(
                timeout=self._settings.timeout_seconds, trust_env=False
            ) as client:
                response = await client.post(url, data=form, headers={"Accept": "application/json"})
        except httpx.HTTPError as e:
            raise OAuthError("google", f"cannot reach {url}: {type(e).__name__}") from e
        try:
            return response.status_code, response.json()
        except ValueError:
            if response.status_code < 400:
                raise BadResponseError("google", "the token endpoint answered no JSON") from None
            return response.status_code, {"error": f"HTTP {response.status_code}"}

    async def complete(self, state: str, code: str) -> StoredToken:
        """Trade the callback's ``code`` for tokens and store them."""
        pending = await asyncio.to_thread(
            self._store.take_pending,
            state,
            now=self._clock(),
            ttl=self._settings.pending_ttl_seconds,
        )
        if (
            pending is None
            or pending.service != "google"
            or pending.verifier is None
            or pending.redirect_uri is None
        ):
            raise OAuthError(
                "google", "this authorisation link is unknown, used or expired: ask for a new one"
            )
        client_id, client_secret = self._client()
        form = oauth.code_exchange_form(
            code=code,
            verifier=pending.verifier.get_secret_value(),
            client_id=client_id,
            client_secret=client_secret,
            redirect_uri=pending.redirect_uri,
        )
        status, body = await self._post(self._google.token_url, form)
        token = oauth.token_from_response(status, body, now=self._clock())
        await asyncio.to_thread(self._store.put, token)
        return token

    async def refresh(self, token: StoredToken) -> StoredToken:
        """A fresh access token (stored); ReconnectRequiredError when Google refuses."""
        if token.refresh_token is None:
            raise ReconnectRequiredError(
                "google", "the access token expired and there is no refresh token"
            )
        client_id, client_secret = self._client()
        form = oauth.refresh_form(
            refresh_token=token.refresh_token.get_secret_value(),
            client_id=client_id,
            client_secret=client_secret,
        )
        status, body = await self._post(self._google.token_url, form)
        fresh = oauth.token_from_response(status, body, now=self._clock(), previous=token)
        await asyncio.to_thread(self._store.put, fresh)
        return fresh

    async def revoke(self, token: StoredToken) -> bool:
        """Ask Google to revoke the grant; True when it confirmed."""
        value = (token.refresh_token or token.access_token).get_secret_value()
        try:
            async with httpx.AsyncClient(
                timeout=self._settings.timeout_seconds, trust_env=False
            ) as client:
                response = await client.post(self._google.revoke_url, data={"token": value})
        except httpx.HTTPError:
            return False
        return response.status_code == 200
