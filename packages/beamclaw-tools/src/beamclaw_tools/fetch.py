"""Outbound HTTP with the SSRF guard applied to every hop.

:func:`guarded_fetch` resolves the host itself, refuses the request when *any* resolved
address is refused by :func:`~beamclaw_tools.netguard.address_refusal`, then connects to
the vetted address (Host header and TLS SNI keep the original name, so certificates are
still checked against it). A DNS answer that changes between check and connect cannot
redirect the request (no DNS rebinding). Redirects are followed manually, one hop at a
time, each hop re-checked; sensitive headers are dropped when a redirect changes origin.
Bodies are read up to ``max_bytes``; the rest is not downloaded. httpx is imported by the
first fetch, not with this module (registering the tools that fetch needs no HTTP client).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from beamclaw_tools.errors import FetchError, UnsafeAddressError
from beamclaw_tools.netguard import (
    IPAddress,
    NetworkPolicy,
    Resolver,
    address_refusal,
    literal_address,
    system_resolver,
)

if TYPE_CHECKING:
    import httpx

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ALWAYS_SENSITIVE = frozenset({"authorization", "cookie", "proxy-authorization"})


@dataclass(frozen=True)
class FetchedResponse:
    """A response read under the caps."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    truncated: bool
    final_url: str
    redirects: tuple[str, ...] = ()

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()

    def text(self) -> str:
        charset = "utf-8"
        for part in (self.header("content-type") or "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


async def vet_url(
    url: httpx.URL, policy: NetworkPolicy, resolver: Resolver
) -> tuple[str, int, IPAddress]:
    """Check one URL; return ``(host, port, address to connect to)`` or raise."""
    if url.scheme not in ("http", "https"):
        raise UnsafeAddressError(str(url), f"scheme {url.scheme!r} is not http or https")
    host = url.host
    if not host:
        raise UnsafeAddressError(str(url), "the URL has no host")
    port = url.port or (443 if url.scheme == "https" else 80)
    literal = literal_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            addresses = await resolver(host, port)
        except OSError as e:
            raise FetchError(str(url), f"cannot resolve {host}: {e}") from e
        if not addresses:
            raise FetchError(str(url), f"cannot resolve {host}: no addresses")
    for address in addresses:
        reason = address_refusal(address, port, host, policy)
        if reason is not None:
            raise UnsafeAddressError(str(url), reason)
    return host, port, addresses[0]


def _same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


async def guarded_fetch(
    method: str,
    url: str,
    *,
    policy: NetworkPolicy,
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    max_bytes: int = 1_000_000,
    timeout_seconds: float = 30.0,
    max_redirects: int = 5,
    follow_redirects: bool = True,
    sensitive_headers: frozenset[str] = frozenset(),
    resolver: Resolver = system_resolver,
    transport: httpx.AsyncBaseTransport | None = None,
) -> FetchedResponse:
    """Fetch ``url`` under the SSRF guard and the size cap.

    Raises:
        UnsafeAddressError: a hop targets a refused address or scheme.
        FetchError: DNS, connection, protocol errors, or too many redirects.
    """
    import httpx

    try:
        current = httpx.URL(url)
    except httpx.InvalidURL as e:
        raise FetchError(url, f"invalid URL: {e}") from e
    send_headers = dict(headers or {})
    drop_on_cross_origin = ALWAYS_SENSITIVE | {h.lower() for h in sensitive_headers}
    redirects: list[str] = []
    async with httpx.AsyncClient(
        trust_env=False, follow_redirects=False, timeout=timeout_seconds, transport=transport
    ) as client:
        while True:
            host, _port, address = await vet_url(current, policy, resolver)
            target = current.copy_with(host=str(address))
            hop_headers = {k: v for k, v in send_headers.items() if k.lower() != "host"}
            hop_headers["Host"] = current.netloc.decode("ascii")
            if not any(k.lower() == "accept-encoding" for k in hop_headers):
                hop_headers["Accept-Encoding"] = "identity"
            extensions: dict[str, object] = {}
            if current.scheme == "https" and literal_address(host) is None:
                extensions["sni_hostname"] = host
            request = client.build_request(
                method, target, headers=hop_headers, content=body, extensions=extensions
            )
            try:
                response = await client.send(request, stream=True)
            except httpx.HTTPError as e:
                raise FetchError(str(current), f"{type(e).__name__}: {e}") from e
            try:
                location = response.headers.get("location")
                if (
                    follow_redirects
                    and response.status_code in REDIRECT_STATUSES
                    and location is not None
                ):
                    if len(redirects) >= max_redirects:
                        raise FetchError(url, f"more than {max_redirects} redirects")
                    try:
                        following = current.join(location)
                    except httpx.InvalidURL as e:
                        raise FetchError(str(current), f"bad redirect {location!r}") from e
                    redirects.append(str(following))
                    if response.status_code == 303 or (
                        response.status_code in (301, 302) and method.upper() not in ("GET", "HEAD")
                    ):
                        method, body = "GET", None
                    if not _same_origin(current, following):
                        send_headers = {
                            k: v
                            for k, v in send_headers.items()
                            if k.lower() not in drop_on_cross_origin
                        }
                    current = following
                    continue
                data = bytearray()
                truncated = False
                async for chunk in response.aiter_bytes():
                    data.extend(chunk)
                    if len(data) > max_bytes:
                        truncated = True
                        del data[max_bytes:]
                        break
                return FetchedResponse(
                    status=response.status_code,
                    reason=response.reason_phrase,
                    headers=tuple(response.headers.multi_items()),
                    body=bytes(data),
                    truncated=truncated,
                    final_url=str(current),
                    redirects=tuple(redirects),
                )
            except httpx.HTTPError as e:
                raise FetchError(str(current), f"{type(e).__name__}: {e}") from e
            finally:
                await response.aclose()
