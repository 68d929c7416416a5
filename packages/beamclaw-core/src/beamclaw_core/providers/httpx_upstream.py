"""The ``httpx`` upstream: httpx's client and pool (``http_transport = "httpx"``, or any
provider handed an ``httpx`` transport by a test).

Imported only when chosen (:func:`~beamclaw_core.providers.http_client.build_upstream`):
the default aiohttp upstream never loads httpx. Failures are worded as the aiohttp
upstream's (:data:`~beamclaw_core.providers.http_client.CONNECT_TIMEOUT` and friends), so
nothing above the seam can tell the two apart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import httpx

from beamclaw_core.providers.base import UpstreamError
from beamclaw_core.providers.http_client import (
    CONNECT_TIMEOUT,
    POOL_TIMEOUT,
    READ_TIMEOUT,
    TRUNCATED,
    WRITE_TIMEOUT,
    UpstreamResponse,
    said,
)
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


def httpx_failure(exc: httpx.HTTPError) -> UpstreamError:
    """httpx's failure as our error, worded as the aiohttp one (:func:`aiohttp_failure`)."""
    if isinstance(exc, httpx.ConnectTimeout):
        return UpstreamError(CONNECT_TIMEOUT)
    if isinstance(exc, httpx.PoolTimeout):
        return UpstreamError(POOL_TIMEOUT)
    if isinstance(exc, httpx.ReadTimeout):
        return UpstreamError(READ_TIMEOUT)
    if isinstance(exc, httpx.WriteTimeout):
        return UpstreamError(WRITE_TIMEOUT)
    if isinstance(exc, httpx.ProxyError):
        return UpstreamError(f"proxy failed: {said(exc)}")
    if isinstance(exc, httpx.ConnectError):
        return UpstreamError(f"cannot connect: {said(exc)}")
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return UpstreamError(f"{TRUNCATED}: {said(exc)}")
    return UpstreamError(f"{type(exc).__name__}: {said(exc)}")


class _HttpxResponse:
    __slots__ = ("_response", "headers", "status_code")

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status_code = response.status_code
        self.headers: Mapping[str, str] = response.headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.HTTPError as exc:
            raise httpx_failure(exc) from exc

    async def aclose(self) -> None:
        await self._response.aclose()


class HttpxUpstream:
    """httpx's client (its own pool, or ``transport``)."""

    def __init__(
        self, settings: ProviderSettings, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        # no transport of our own unless given one: httpx ignores the environment's
        # proxies when handed a transport
        self.client = _CookielessClient(
            timeout=http_timeout(settings),
            limits=http_limits(settings),
            transport=transport,
            trust_env=settings.trust_env,
            follow_redirects=False,
        )

    async def post(self, url: str, content: bytes, headers: Mapping[str, str]) -> UpstreamResponse:
        try:
            request = self.client.build_request("POST", url, content=content, headers=headers)
            return _HttpxResponse(await self.client.send(request, stream=True))
        except httpx.HTTPError as exc:
            raise httpx_failure(exc) from exc

    async def aclose(self) -> None:
        await self.client.aclose()
