"""Access tokens for API calls: the stored ones, refreshed before they expire.

The store's file I/O (a lock, a read, a decryption) runs in a worker thread, never on
the event loop. Invariant: at most one refresh per service runs at a time (concurrent tool calls wait
for it and reuse its result); a Google token expiring within ``refresh_margin_seconds``
is refreshed before use, and a refused refresh asks the person to reconnect.
"""

from __future__ import annotations

import asyncio
import time

from beamclaw_tools.integrations.errors import NotConnectedError, ReconnectRequiredError
from beamclaw_tools.integrations.google_oauth import Clock, GoogleOAuth
from beamclaw_tools.integrations.oauth import needs_refresh
from beamclaw_tools.integrations.settings import IntegrationsSettings
from beamclaw_tools.integrations.token_store import TokenStore
from beamclaw_tools.integrations.tokens import Service, StoredToken


class Credentials:
    """Hands out valid access tokens."""

    def __init__(
        self,
        settings: IntegrationsSettings,
        store: TokenStore,
        google: GoogleOAuth,
        *,
        clock: Clock = time.time,
    ) -> None:
        self._settings = settings
        self._store = store
        self._google = google
        self._clock = clock
        self._refreshing = asyncio.Lock()

    async def _stored(self, service: Service) -> StoredToken:
        token = await asyncio.to_thread(self._store.get, service)
        if token is None:
            raise NotConnectedError(service)
        return token

    async def access_token(self, service: Service, *, force_refresh: bool = False) -> str:
        """A usable access token for ``service`` (refreshed first when needed)."""
        token = await self._stored(service)
        margin = self._settings.refresh_margin_seconds
        if force_refresh or needs_refresh(token, now=self._clock(), margin=margin):
            if service != "google":
                raise ReconnectRequiredError(service, "the token expired")
            async with self._refreshing:
                current = await self._stored(service)
                stale = current.access_token == token.access_token
                if stale and (
                    force_refresh or needs_refresh(current, now=self._clock(), margin=margin)
                ):
                    current = await self._google.refresh(current)
                token = current
        return token.access_token.get_secret_value()
