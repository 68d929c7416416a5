"""The long-lived HTTP connection pool each provider owns (its *upstream*).

One :class:`Upstream` per provider, created with it and closed by ``Provider.close()``,
with explicit pool limits and connect/read/pool timeouts from
:class:`~beamclaw_core.providers.settings.ProviderSettings`. Two implementations behind
the one seam, chosen by ``http_transport``:

* ``aiohttp`` (the default): aiohttp's client directly. Its pool keeps its throughput at
  50 concurrent streams where httpx's own pool degrades (docs/providers.md), and with no
  httpx request/response objects around it a request costs about 0.2 ms less.
* ``httpx``: httpx's client and pool; also used whenever a test hands the provider an
  ``httpx`` transport (``httpx.MockTransport``, say). It lives in
  :mod:`~beamclaw_core.providers.httpx_upstream`, imported only when chosen: httpx (with
  the rich console its command-line helper imports) weighs ~7 MB in a process that never
  uses it.

Whichever carries the bytes, a transport failure surfaces as BeamClaw's own
:class:`~beamclaw_core.providers.base.UpstreamError` (kind ``NETWORK``, with the same
message on both transports: ``cannot connect: …``, ``timed out waiting for the response
(read_timeout)``, ``connection broke mid-response (truncated stream): …``), translated
here at the adapter edge, so nothing above this module knows httpx's or aiohttp's
exception types; bodies arrive decoded (a
``Content-Encoding: gzip`` answer is inflated); no cookies are kept (an LLM API needs
none, and an endpoint has no business setting state that later requests carry). Stream
idle and total timeouts are enforced by the provider around each read, not here; httpx's
``write_timeout`` has no aiohttp counterpart, so there the total timeout bounds a write.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Protocol

import aiohttp
import certifi
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from beamclaw_core.providers.base import UpstreamError
from beamclaw_core.providers.settings import ProviderSettings

if TYPE_CHECKING:
    import httpx


class UpstreamResponse(Protocol):
    """A response whose headers have arrived; its body is read with :meth:`aiter_bytes`
    and the connection released by :meth:`aclose` (always called)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Case-insensitive."""
        ...

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The decoded body in chunks; transport failures raise :class:`UpstreamError`."""
        ...

    async def aclose(self) -> None: ...


class Upstream(Protocol):
    """POSTs to one provider over a pooled, long-lived client."""

    async def post(self, url: str, content: bytes, headers: Mapping[str, str]) -> UpstreamResponse:
        """Send; returns once the response headers are in (:class:`UpstreamError` if
        they never come)."""
        ...

    async def aclose(self) -> None: ...


CONNECT_TIMEOUT = "connection timed out (connect_timeout)"
POOL_TIMEOUT = "no free connection in the pool (pool_timeout; raise max_connections)"
READ_TIMEOUT = "timed out waiting for the response (read_timeout)"
WRITE_TIMEOUT = "timed out sending the request (write_timeout)"
TRUNCATED = "connection broke mid-response (truncated stream)"


def said(exc: Exception) -> str:
    """An exception's message, or its type's name when it has none."""
    return str(exc) or type(exc).__name__


def build_upstream(
    settings: ProviderSettings, transport: httpx.AsyncBaseTransport | None = None
) -> Upstream:
    """The upstream for one provider. ``transport`` (tests) selects httpx with it."""
    if transport is None and settings.http_transport == "aiohttp":
        return AiohttpUpstream(settings)
    from beamclaw_core.providers.httpx_upstream import HttpxUpstream

    return HttpxUpstream(settings, transport)


def ssl_context(trust_env: bool) -> ssl.SSLContext:
    """The CA bundle httpx would use: ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` with
    ``trust_env``, else certifi's (``httpx.create_ssl_context``, without importing httpx)."""
    if trust_env and os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if trust_env and os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    return ssl.create_default_context(cafile=certifi.where())


# -- aiohttp ----------------------------------------------------------------------------


def aiohttp_failure(exc: aiohttp.ClientError) -> UpstreamError:
    """aiohttp's failure as our error, worded as the httpx one (:func:`httpx_failure`)."""
    if isinstance(exc, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
        return UpstreamError(f"proxy failed: {said(exc)}")
    if isinstance(exc, aiohttp.ConnectionTimeoutError):  # before its base ServerTimeoutError
        return UpstreamError(CONNECT_TIMEOUT)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return UpstreamError(READ_TIMEOUT)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return UpstreamError(f"cannot connect: {said(exc)}")
    if isinstance(
        exc,
        aiohttp.ServerDisconnectedError
        | aiohttp.ClientPayloadError
        | aiohttp.ClientOSError
        | aiohttp.ClientConnectionError,
    ):
        return UpstreamError(f"{TRUNCATED}: {said(exc)}")
    return UpstreamError(f"{type(exc).__name__}: {said(exc)}")


class _AiohttpResponse:
    __slots__ = ("_response", "headers", "status_code")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status
        self.headers: Mapping[str, str] = response.headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        content = self._response.content
        try:
            while chunk := await content.readany():
                yield chunk
        except aiohttp.ClientError as exc:
            raise aiohttp_failure(exc) from exc

    async def aclose(self) -> None:
        # back to the pool when the body was read to the end, else the connection closes
        self._response.release()


_Target = tuple[URL, URL | None, aiohttp.BasicAuth | None]
"""A request URL, parsed, with the proxy (and its credentials) it goes through."""


class AiohttpUpstream:
    """aiohttp's client and pool. The session is opened on the first request (aiohttp
    wants a running event loop for it).

    With ``trust_env`` the proxy for a URL (``HTTPS_PROXY``/``NO_PROXY``) is looked up
    once, on its first request, instead of by aiohttp's own ``trust_env``, which costs
    two thread hops (a proxy and a ``.netrc`` lookup) on every request.
    ``max_keepalive_connections`` has no aiohttp counterpart: ``max_connections`` bounds
    the pool and idle connections close after ``keepalive_expiry``."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._session: aiohttp.ClientSession | None = None
        self._targets: dict[str, _Target] = {}
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            # aiohttp's ``connect`` covers the wait for a pooled connection and the
            # connect itself; ``sock_connect`` the connect alone
            connect=settings.pool_timeout + settings.connect_timeout,
            sock_connect=settings.connect_timeout,
            sock_read=settings.read_timeout,
        )

    def _open(self) -> aiohttp.ClientSession:
        s = self._settings
        connector = aiohttp.TCPConnector(
            limit=s.max_connections,
            keepalive_timeout=s.keepalive_expiry,
            ssl=ssl_context(s.trust_env),
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=True,
        )
        return self._session

    def _target(self, url: str) -> _Target:
        target = self._targets.get(url)
        if target is None:
            parsed = URL(url)
            proxy: URL | None = None
            auth: aiohttp.BasicAuth | None = None
            if self._settings.trust_env:
                with suppress(LookupError):
                    proxy, auth = get_env_proxy_for_url(parsed)
            target = self._targets[url] = (parsed, proxy, auth)
        return target

    async def post(self, url: str, content: bytes, headers: Mapping[str, str]) -> UpstreamResponse:
        session = self._session or self._open()
        parsed, proxy, proxy_auth = self._target(url)
        try:
            response = await session.post(
                parsed,
                data=content,
                headers=headers,
                allow_redirects=False,
                proxy=proxy,
                proxy_auth=proxy_auth,
            )
        except aiohttp.ClientError as exc:
            raise aiohttp_failure(exc) from exc
        return _AiohttpResponse(response)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
