"""The async shell around one API request: bearer token, bounded 429 retries, refresh.

Invariants: a request is retried at most ``max_retries`` times after a 429, each after
the answer's ``Retry-After`` (a wait longer than ``max_retry_after_seconds`` is not
waited for); a Google 401 forces one token refresh and one more try; tokens travel only
in the ``Authorization`` header, never in URLs or messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from beamclaw_tools.integrations.answers import RetryLater, decode_answer
from beamclaw_tools.integrations.credentials import Credentials
from beamclaw_tools.integrations.errors import (
    RateLimitedError,
    ReconnectRequiredError,
    ServiceError,
)
from beamclaw_tools.integrations.settings import IntegrationsSettings
from beamclaw_tools.integrations.tokens import Service

Sleep = Callable[[float], Awaitable[None]]


class ApiClient:
    """Calls the services' REST APIs with the stored tokens."""

    def __init__(
        self,
        settings: IntegrationsSettings,
        credentials: Credentials,
        *,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._settings = settings
        self._credentials = credentials
        self._sleep = sleep

    def _headers(self, service: Service, token: str) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        if service == "notion":
            headers["Notion-Version"] = self._settings.notion.api_version
        return headers

    async def call(
        self,
        service: Service,
        method: str,
        url: str,
        *,
        params: Mapping[str, str | int | list[str]] | None = None,
        json: Any = None,
    ) -> dict[str, Any]:
        """The decoded JSON answer of one API request (see the module invariants)."""
        attempts = 0
        refreshed = False
        while True:
            token = await self._credentials.access_token(service, force_refresh=False)
            try:
                async with httpx.AsyncClient(
                    timeout=self._settings.timeout_seconds, trust_env=False
                ) as client:
                    response = await client.request(
                        method, url, params=params, json=json, headers=self._headers(service, token)
                    )
            except httpx.HTTPError as e:
                raise ServiceError(service, 0, f"cannot reach {service}: {type(e).__name__}") from e
            attempts += 1
            try:
                answer = decode_answer(
                    service,
                    response.status_code,
                    response.text,
                    response.headers.get("retry-after"),
                )
            except ReconnectRequiredError:
                if service != "google" or refreshed:
                    raise
                refreshed = True
                await self._credentials.access_token(service, force_refresh=True)
                continue
            if not isinstance(answer, RetryLater):
                return answer
            wait = answer.retry_after
            cap = self._settings.max_retry_after_seconds
            if attempts > self._settings.max_retries or (wait is not None and wait > cap):
                raise RateLimitedError(service, attempts, wait)
            await self._sleep(wait if wait is not None else min(2.0**attempts, cap))
