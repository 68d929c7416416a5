"""A fake of Google (OAuth, Gmail, Calendar), Notion and Slack on 127.0.0.1 (real HTTP).

One aiohttp server answers every API under its own prefix (``/oauth``, ``/gmail/v1``,
``/calendar/v3``, ``/notion/v1``, ``/slack/api``) in the shapes of the services' public
documentation, over the data in :mod:`.fixtures`. It checks what the real ones check
(bearer tokens, PKCE verifiers, client ids, redirect URIs), records every request and
injects faults::

    async with FakeIntegrationsServer() as server:
        settings = server.settings(redirect_base_url=gateway_url)
        server.fail("gmail", FakeFault(429, headers={"Retry-After": "0"}))
        ...

A fault is consumed by the next request whose path starts with the service's prefix.
"""

from __future__ import annotations

import socket
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from aiohttp import web

from beamclaw_obs import Secret
from beamclaw_tools.integrations.settings import (
    GoogleSettings,
    IntegrationsSettings,
    NotionSettings,
    SlackSettings,
)
from beamclaw_tools.integrations.testing.fixtures import FakeData

HOST = "127.0.0.1"
Api = Literal["oauth", "gmail", "calendar", "notion", "slack"]
PREFIXES: dict[Api, str] = {
    "oauth": "/oauth",
    "gmail": "/gmail/v1",
    "calendar": "/calendar/v3",
    "notion": "/notion/v1",
    "slack": "/slack/api",
}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class FakeFault:
    """An answer served instead of the real one: a status, a body (JSON unless ``raw``)."""

    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict[str, str])
    raw: bytes | None = None
    """Served as is (garbage, HTML error pages) when given."""

    @classmethod
    def garbage(cls) -> FakeFault:
        return cls(200, raw=b"<html>upstream proxy error</html>{", headers={})


@dataclass(frozen=True)
class Recorded:
    """One request the fake received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


class FakeIntegrationsServer:
    """Serve the fake APIs; ``data`` is the accounts' content and token state."""

    def __init__(self, data: FakeData | None = None) -> None:
        self.data = data or FakeData()
        self.requests: list[Recorded] = []
        self._faults: dict[Api, deque[FakeFault]] = {api: deque() for api in PREFIXES}
        self._runner: web.AppRunner | None = None
        self._port = 0

    # ---------------------------------------------------------------- lifecycle
    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self._port}"

    def settings(self, **overrides: Any) -> IntegrationsSettings:
        """``[tools.integrations]`` pointed at this server (Google client included)."""
        base = self.base_url
        values: dict[str, Any] = {
            "enabled": True,
            "google": GoogleSettings(
                client_id=self.data.google.client_id,
                client_secret=Secret.model_validate(self.data.google.client_secret),
                auth_url=f"{base}/oauth/authorize",
                token_url=f"{base}/oauth/token",
                revoke_url=f"{base}/oauth/revoke",
                gmail_base_url=f"{base}/gmail/v1",
                calendar_base_url=f"{base}/calendar/v3",
            ),
            "notion": NotionSettings(base_url=f"{base}/notion/v1"),
            "slack": SlackSettings(base_url=f"{base}/slack/api"),
        }
        values.update(overrides)
        return IntegrationsSettings(**values)

    async def start(self) -> FakeIntegrationsServer:
        from beamclaw_tools.integrations.testing.google import google_routes
        from beamclaw_tools.integrations.testing.notion import notion_routes
        from beamclaw_tools.integrations.testing.slack import slack_routes

        app = web.Application(middlewares=[self._middleware])
        for method, path, handler in [
            *google_routes(self.data),
            *notion_routes(self.data),
            *slack_routes(self.data),
        ]:
            app.router.add_route(method, path, handler)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5, access_log=None)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        sock.listen(64)
        sock.setblocking(False)
        self._port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeIntegrationsServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # ---------------------------------------------------------------- faults, records
    def fail(self, api: Api, *faults: FakeFault) -> None:
        """Serve ``faults`` (in order) to the next requests under ``api``'s prefix."""
        self._faults[api].extend(faults)

    def requests_to(self, api: Api) -> list[Recorded]:
        prefix = PREFIXES[api]
        return [r for r in self.requests if r.path.startswith(prefix)]

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        body = await request.read()
        self.requests.append(
            Recorded(
                request.method,
                request.path,
                dict(request.query),
                {k.lower(): v for k, v in request.headers.items()},
                body,
            )
        )
        for api, prefix in PREFIXES.items():
            if request.path.startswith(prefix) and self._faults[api]:
                fault = self._faults[api].popleft()
                if fault.raw is not None:
                    return web.Response(
                        status=fault.status,
                        body=fault.raw,
                        headers=fault.headers,
                        content_type="application/json",
                    )
                return web.json_response(
                    fault.body or {}, status=fault.status, headers=fault.headers
                )
        return await handler(request)
