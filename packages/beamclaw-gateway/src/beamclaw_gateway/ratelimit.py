"""Rate limiting with the ``limits`` library (moving window, async storages).

Every external entry point is limited, per kind of client (:func:`client_kind`): an
anonymous client (neither loopback nor authenticated, or presenting a wrong token) per
IP under the protective ``per_ip``; a loopback client per IP under ``per_loopback``; an
authenticated client per token (hashed) under ``per_token``. Limits protect the gateway
from the outside; they do not throttle its owner's local scripts. Storage is in-process memory by default
(:class:`~beamclaw_gateway.window_storage.WindowStorage`) or Redis (redis-py) so that
several gateway nodes share counters. A storage failure never takes the API down:
the request is allowed, the failure logged and ``/health`` shows ``rate_limit`` degraded.
"""

from __future__ import annotations

import ipaddress
import math
import time
from dataclasses import dataclass
from typing import Any, Literal

from limits import RateLimitItem, parse_many
from limits.aio.storage import RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string
from loguru import logger

from beamclaw_gateway.settings import RateLimitSettings
from beamclaw_gateway.window_storage import WindowStorage
from beamclaw_obs import ComponentHealth, EventType, HealthState, emit

ClientKind = Literal["anonymous", "loopback", "authenticated"]


def is_loopback_address(ip: str) -> bool:
    """True for ``127.0.0.0/8``, ``::1`` and IPv4-mapped loopback; False for non-IPs."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def client_kind(ip: str, *, token_verified: bool, token_rejected: bool) -> ClientKind:
    """Which limit counts a request: a verified token wins, a wrong token is anonymous
    (guessing stays limited even from loopback), else the address decides."""
    if token_verified:
        return "authenticated"
    if token_rejected or not is_loopback_address(ip):
        return "anonymous"
    return "loopback"


@dataclass(frozen=True, slots=True)
class RateDecision:
    """The outcome of one check, with what the rate-limit headers report."""

    allowed: bool
    limit: int
    remaining: int
    reset_after: float
    """Seconds until the tightest window frees a slot."""

    def headers(self) -> dict[str, str]:
        reset = max(1, math.ceil(self.reset_after))
        out = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.remaining)),
            "X-RateLimit-Reset": str(reset),
        }
        if not self.allowed:
            out["Retry-After"] = str(reset)
        return out


def _async_uri(uri: str) -> str:
    return uri if uri.startswith("async+") else f"async+{uri}"


def _storage(uri: str) -> Storage:
    if uri.split("://", 1)[0] in ("memory", "async+memory"):
        return WindowStorage()
    options: dict[str, float | str | bool] = {}
    if "redis" in uri:
        options["implementation"] = "redispy"
    storage = storage_from_string(_async_uri(uri), **options)
    assert isinstance(storage, Storage)
    return storage


class RateLimiter:
    """Moving-window limits per kind of client over one ``limits`` storage."""

    def __init__(self, settings: RateLimitSettings) -> None:
        self.settings = settings
        self.enabled = settings.enabled
        self.exempt = frozenset(settings.exempt_paths)
        self._limits: dict[ClientKind, list[RateLimitItem]] = {
            "anonymous": parse_many(settings.per_ip),
            "loopback": parse_many(settings.per_loopback),
            "authenticated": parse_many(settings.per_token),
        }
        self.storage: Storage = _storage(settings.storage_uri)
        self._strategy = MovingWindowRateLimiter(self.storage)
        self._last_error: str | None = None

    async def check(self, kind: ClientKind, ident: str) -> RateDecision:
        """Count one request of ``ident`` (an IP, or a token key when authenticated) under
        ``kind``'s limits; the tightest decides."""
        tightest: RateDecision | None = None
        try:
            for item in self._limits[kind]:
                allowed = await self._strategy.hit(item, "gateway", kind, ident)
                stats = await self._strategy.get_window_stats(item, "gateway", kind, ident)
                decision = RateDecision(
                    allowed, item.amount, stats.remaining, stats.reset_time - time.time()
                )
                if not allowed:
                    emit(
                        EventType.RATE_LIMITED,
                        by=kind,
                        limit=str(item),
                        retry_after=decision.reset_after,
                    )
                    return decision
                if tightest is None or decision.remaining < tightest.remaining:
                    tightest = decision
        except Exception as exc:  # storage down: fail open, loudly
            if self._last_error is None:
                logger.warning("rate limiter storage failed, allowing requests: {}", exc)
            self._last_error = f"{type(exc).__name__}: {exc}"
            return RateDecision(True, 0, 0, 0.0)
        self._last_error = None
        return tightest or RateDecision(True, 0, 0, 0.0)

    async def reset(self) -> None:
        """Forget every counter (tests, ``beamclaw`` admin)."""
        await self.storage.reset()

    def health(self) -> ComponentHealth:
        if not self.enabled:
            return ComponentHealth(HealthState.DISABLED)
        data: dict[str, object] = {"storage": self.settings.storage_uri.split("://")[0]}
        if self._last_error is not None:
            return ComponentHealth(HealthState.DEGRADED, self._last_error, data)
        return ComponentHealth(HealthState.UP, data=data)

    async def close(self) -> None:
        """Close the Redis connection pool (the memory storage holds nothing to close)."""
        if isinstance(self.storage, RedisStorage):
            client: Any = getattr(self.storage.bridge, "storage", None)
            if client is not None:
                await client.aclose()
