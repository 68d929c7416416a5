"""The integrations, wired: token store, Google OAuth, credentials, API client, tools.

One :class:`Integrations` per process (the gateway's composition root, or the CLI)
answers the tools, the OAuth callback route and ``beamclaw integrations``. Its state
lives in the encrypted token store, so the gateway and the CLI share it.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from beamclaw_obs import beamclaw_home
from beamclaw_tools.integrations.base import IntegrationContext, IntegrationTool
from beamclaw_tools.integrations.calendar import calendar_tools
from beamclaw_tools.integrations.client import ApiClient, Sleep
from beamclaw_tools.integrations.connect import ConnectTool, StatusTool
from beamclaw_tools.integrations.credentials import Credentials
from beamclaw_tools.integrations.errors import IntegrationError, OAuthError
from beamclaw_tools.integrations.gmail import gmail_tools
from beamclaw_tools.integrations.google_oauth import GoogleOAuth
from beamclaw_tools.integrations.notion import notion_tools
from beamclaw_tools.integrations.pasted import (
    PastedService,
    paste_instructions,
    paste_path,
    verify_pasted,
)
from beamclaw_tools.integrations.settings import IntegrationsSettings
from beamclaw_tools.integrations.slack import slack_tools
from beamclaw_tools.integrations.token_store import TokenStore
from beamclaw_tools.integrations.tokens import (
    SERVICES,
    PendingAuthorisation,
    Service,
    StoredToken,
)
from beamclaw_tools.types import Tool


@dataclass(frozen=True)
class Connection:
    """What ``integrations list`` shows about one service (never a token)."""

    service: Service
    connected: bool
    account: str | None = None
    expires_at: float | None = None
    refreshable: bool = False
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Revocation:
    """The outcome of revoking a service: was a token stored, did the service confirm."""

    service: Service
    removed: bool
    remote: str
    """``confirmed``, ``failed`` or ``not supported`` (Notion has no revocation API)."""


def default_store_paths(settings: IntegrationsSettings, home: Path) -> tuple[Path, Path]:
    """``(token store, key file)`` under the BeamClaw home unless configured."""
    store = settings.token_store or home / "integrations" / "tokens.enc"
    key = settings.key_file or home / "secrets" / "integrations.key"
    return store.expanduser(), key.expanduser()


class Integrations:
    """Everything the integrations need, built from ``[tools.integrations]``."""

    def __init__(
        self,
        settings: IntegrationsSettings,
        *,
        home: Path | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self._clock = clock
        store_path, key_path = default_store_paths(settings, home or beamclaw_home())
        self.store = TokenStore(store_path, key_path)
        self.google = GoogleOAuth(settings, self.store, clock=clock)
        self.credentials = Credentials(settings, self.store, self.google, clock=clock)
        self.api = ApiClient(settings, self.credentials, sleep=sleep)
        self.context = IntegrationContext(settings, self.api)

    def tools(self) -> list[Tool]:
        """The service tools plus ``integrations_connect`` and ``integrations_status``."""
        service_tools: list[IntegrationTool[Any]] = [
            *gmail_tools(self.context),
            *calendar_tools(self.context),
            *notion_tools(self.context),
            *slack_tools(self.context),
        ]
        return [*service_tools, ConnectTool(self), StatusTool(self)]

    # ---------------------------------------------------------------- connecting
    def connect_instructions(self, service: Service) -> str:
        """What the person does to connect ``service``: a link (Google) or where to get
        a token and how to paste it (Notion, Slack)."""
        if service == "google":
            url = self.google.start()
            minutes = int(self.settings.pending_ttl_seconds // 60)
            return (
                "Open this link to let BeamClaw read your Gmail and Google Calendar "
                f"(read-only; one consent covers both; valid {minutes} minutes):\n{url}"
            )
        return paste_instructions(service, self.paste_link(service))

    def paste_link(self, service: PastedService) -> str:
        """A one-time link to the gateway's paste form for ``service``."""
        state = secrets.token_urlsafe(24)
        now = self._clock()
        self.store.add_pending(
            state,
            PendingAuthorisation(service=service, created_at=now),
            now=now,
            ttl=self.settings.pending_ttl_seconds,
        )
        base = self.settings.redirect_base_url.rstrip("/")
        return f"{base}{paste_path(service)}?state={state}"

    def paste_form_valid(self, service: PastedService, state: str) -> bool:
        """True when ``state`` is a fresh paste link for ``service`` (not consumed)."""
        pending = self.store.peek_pending(
            state, now=self._clock(), ttl=self.settings.pending_ttl_seconds
        )
        return pending is not None and pending.service == service

    async def complete_paste(self, service: PastedService, state: str, token: str) -> StoredToken:
        """The paste form's submission: check the link, then the token, then store it.

        The link is used up only by a token the service accepted (a typo can be retried).
        """
        if not await asyncio.to_thread(self.paste_form_valid, service, state):
            raise OAuthError(service, "this link is unknown, used or expired: ask for a new one")
        stored = await self.save_pasted(service, token)
        await asyncio.to_thread(
            self.store.take_pending,
            state,
            now=self._clock(),
            ttl=self.settings.pending_ttl_seconds,
        )
        return stored

    async def complete_google(self, state: str, code: str) -> StoredToken:
        """The OAuth callback: trade the code, store the tokens."""
        token = await self.google.complete(state, code)
        try:  # whose mailbox: shown by `integrations list` and integrations_status
            base = self.settings.google.gmail_base_url.rstrip("/")
            profile = await self.api.call("google", "GET", f"{base}/users/me/profile")
        except IntegrationError:
            return token
        address = profile.get("emailAddress")
        if not isinstance(address, str) or not address:
            return token
        named = token.model_copy(update={"account": address})
        await asyncio.to_thread(self.store.put, named)
        return named

    async def save_pasted(self, service: PastedService, token: str) -> StoredToken:
        """Check a pasted token with its service and store it encrypted."""
        token = token.strip()
        if not token:
            raise OAuthError(service, f"the {service} token is empty")
        account = await verify_pasted(self.settings, service, token)
        stored = StoredToken(
            service=service,
            access_token=SecretStr(token),
            obtained_at=self._clock(),
            account=account,
        )
        await asyncio.to_thread(self.store.put, stored)
        return stored

    # ---------------------------------------------------------------- listing, revoking
    def connections(self) -> list[Connection]:
        """Every service, connected or not."""
        tokens = self.store.load().tokens
        out: list[Connection] = []
        for service in SERVICES:
            token = tokens.get(service)
            if token is None:
                out.append(Connection(service, connected=False))
                continue
            out.append(
                Connection(
                    service,
                    connected=True,
                    account=token.account,
                    expires_at=token.expires_at,
                    refreshable=token.refresh_token is not None,
                    scopes=token.scopes,
                )
            )
        return out

    async def revoke(self, service: Service) -> Revocation:
        """Revoke the grant at the service (where it can be) and forget the token."""
        token = await asyncio.to_thread(self.store.get, service)
        if token is None:
            return Revocation(service, removed=False, remote="not connected")
        remote = "not supported"
        if service == "google":
            remote = "confirmed" if await self.google.revoke(token) else "failed"
        elif service == "slack":
            remote = "confirmed" if await self._revoke_slack(token) else "failed"
        await asyncio.to_thread(self.store.remove, service)
        return Revocation(service, removed=True, remote=remote)

    async def _revoke_slack(self, token: StoredToken) -> bool:
        url = self.settings.slack.base_url.rstrip("/") + "/auth.revoke"
        headers = {"Authorization": f"Bearer {token.access_token.get_secret_value()}"}
        try:
            async with httpx.AsyncClient(
                timeout=self.settings.timeout_seconds, trust_env=False
            ) as client:
                response = await client.get(url, headers=headers)
            return bool(response.json().get("revoked"))
        except (httpx.HTTPError, ValueError, AttributeError):
            return False
