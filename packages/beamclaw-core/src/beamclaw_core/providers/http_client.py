"""The long-lived HTTP client each provider owns.

One :class:`httpx.AsyncClient` per provider, created once and closed by
``Provider.close()``, with explicit pool limits and connect/read/write/pool timeouts from
:class:`~beamclaw_core.providers.settings.ProviderSettings`. With
``http_transport = "aiohttp"`` (the default) requests go through httpx's API but
aiohttp's connection pool (``httpx_aiohttp.AiohttpTransport``), which keeps its throughput
at 50 concurrent streams where httpx's own pool degrades (numbers in docs/providers.md).
Stream idle and total timeouts are enforced by the provider around each read, not here.
The client keeps no cookies: an LLM API needs none, a provider endpoint has no business
setting state that later requests carry, and httpx's cookie-policy pass over every
response cost ~0.1 ms per request.
"""

from __future__ import annotations

import httpx
from httpx_aiohttp import AiohttpTransport

from beamclaw_core.providers.settings import ProviderSettings


def http_limits(settings: ProviderSettings) -> httpx.Limits:
    """Pool limits from the settings."""
    return httpx.Limits(
        max_connections=settings.max_connections,
        max_keepalive_connections=settings.max_keepalive_connections,
        keepalive_expiry=settings.keepalive_expiry,
    )


def http_timeout(settings: ProviderSettings) -> httpx.Timeout:
    """Per-operation timeouts from the settings."""
    return httpx.Timeout(
        connect=settings.connect_timeout,
        read=settings.read_timeout,
        write=settings.write_timeout,
        pool=settings.pool_timeout,
    )


class _NoCookies(httpx.Cookies):
    """A cookie jar that keeps nothing."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class _CookielessClient(httpx.AsyncClient):
    @property
    def cookies(self) -> httpx.Cookies:  # pyright: ignore[reportIncompatibleMethodOverride]
        return _NO_COOKIES


_NO_COOKIES = _NoCookies()


def build_http_client(
    settings: ProviderSettings, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """A client for one provider. ``transport`` overrides the configured one (tests)."""
    limits = http_limits(settings)
    if transport is None:
        if settings.http_transport == "aiohttp":
            transport = AiohttpTransport(limits=limits, trust_env=settings.trust_env)
        else:
            transport = httpx.AsyncHTTPTransport(limits=limits, trust_env=settings.trust_env)
    return _CookielessClient(
        timeout=http_timeout(settings),
        limits=limits,
        transport=transport,
        trust_env=settings.trust_env,
        follow_redirects=False,
    )
