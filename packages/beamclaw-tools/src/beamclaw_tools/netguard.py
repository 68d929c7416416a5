"""SSRF guard: which network addresses an outbound tool request may reach.

The decision is a pure function, :func:`address_refusal`, of (address, port, host name as
written in the URL, :class:`NetworkPolicy`). Non-global addresses — loopback, private,
link-local, multicast, reserved, unspecified, shared (CGNAT) — are refused unless the
policy sets ``allow_private`` or an :class:`AllowRule` matches. IPv4-mapped IPv6
addresses are judged as the IPv4 address they carry.

Allow rules are written as strings: ``10.0.0.0/8`` (CIDR), ``127.0.0.1`` or
``127.0.0.1:8080`` (address, optional port), ``[::1]:8080``, ``intranet.local`` or
``intranet.local:8443`` (host name as written in the URL, optional port).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
"""``(host, port) -> addresses``; injectable so tests and callers control DNS."""


@dataclass(frozen=True)
class AllowRule:
    """One exception to the private-address refusal."""

    network: IPNetwork | None = None
    host: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> AllowRule:
        """Parse ``cidr``, ``ip[:port]``, ``[v6]:port`` or ``host[:port]``."""
        value = text.strip()
        if not value:
            raise ValueError("empty allow rule")
        if "/" in value:
            return cls(network=ipaddress.ip_network(value, strict=False))
        if value.startswith("["):
            addr, _, rest = value[1:].partition("]")
            port = int(rest[1:]) if rest.startswith(":") else None
            return cls(network=ipaddress.ip_network(addr), port=port)
        try:
            return cls(network=ipaddress.ip_network(value))
        except ValueError:
            pass
        host, sep, port_text = value.rpartition(":")
        if sep and port_text.isdigit():
            port = int(port_text)
            try:
                return cls(network=ipaddress.ip_network(host), port=port)
            except ValueError:
                return cls(host=host.lower(), port=port)
        return cls(host=value.lower())

    def matches(self, address: IPAddress, port: int, hostname: str) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return address.version == self.network.version and address in self.network
        return self.host == hostname.lower().rstrip(".")


@dataclass(frozen=True)
class NetworkPolicy:
    """What outbound requests may reach beyond the public internet."""

    allow_private: bool = False
    allowed: tuple[AllowRule, ...] = ()

    @classmethod
    def from_config(cls, allow_private: bool, allowed_hosts: Iterable[str]) -> NetworkPolicy:
        return cls(allow_private, tuple(AllowRule.parse(h) for h in allowed_hosts))


def unmap(address: IPAddress) -> IPAddress:
    """The IPv4 address inside an IPv4-mapped IPv6 address, else ``address``."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def address_class(address: IPAddress) -> str | None:
    """Why an address is not public (``"loopback"`` …), or None for a global address."""
    ip = unmap(address)
    checks: tuple[tuple[bool, str], ...] = (
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
    )
    for flag, name in checks:
        if flag:
            return name
    if not ip.is_global:
        return "non-global (shared or reserved)"
    return None


def address_refusal(
    address: IPAddress, port: int, hostname: str, policy: NetworkPolicy
) -> str | None:
    """Pure SSRF decision: None when allowed, else the reason for refusal."""
    kind = address_class(address)
    if kind is None or policy.allow_private:
        return None
    ip = unmap(address)
    if any(
        rule.matches(ip, port, hostname) or rule.matches(address, port, hostname)
        for rule in policy.allowed
    ):
        return None
    return (
        f"{hostname}:{port} resolves to {kind} address {address}; private targets are "
        "refused unless allowed in [tools.<tool>] allow_private / allowed_hosts"
    )


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Resolve with the event loop's ``getaddrinfo`` (TCP addresses, deduplicated)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if ip not in found:
            found.append(ip)
    return found


def literal_address(host: str) -> IPAddress | None:
    """The address when ``host`` is an IP literal (brackets allowed), else None."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
