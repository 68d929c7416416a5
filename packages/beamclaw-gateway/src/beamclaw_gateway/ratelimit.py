"""Rate limiting: moving windows per client, in process memory or in Redis.

Every external entry point is limited, per kind of client (:func:`client_kind`): an
anonymous client (neither loopback nor authenticated, or presenting a wrong token) per
IP under the protective ``per_ip``; a loopback client per IP under ``per_loopback``; an
authenticated client per token (hashed) under ``per_token``. Limits protect the gateway
from the outside; they do not throttle its owner's local scripts. Storage is in-process memory by default
(:class:`~beamclaw_gateway.window_storage.MovingWindows`, no ``limits`` import) or Redis
(the ``limits`` library's moving window over redis-py) so that several gateway nodes
share counters. A storage failure never takes the API down: the request is allowed, the
failure logged and ``/health`` shows ``rate_limit`` degraded.
"""

from __future__ import annotations

import ipaddress
import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from loguru import logger

from beamclaw_gateway.rates import Rate, parse_rates
from beamclaw_gateway.settings import RateLimitSettings
from beamclaw_gateway.window_storage import MovingWindows
from beamclaw_obs import ComponentHealth, EventType, HealthState, emit

if TYPE_CHECKING:
    from limits.aio.storage import Storage as AsyncStorage

ClientKind = Literal["anonymous", "loopback", "authenticated"]


@lru_cache(maxsize=1024)
def is_loopback_address(ip: str) -> bool:
    """True for ``127.0.0.0/8``, ``::1`` and IPv4-mapped loopback; False for non-IPs.
    (Remembered per address: clients come back, and parsing one costs ~10 µs.)"""
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


class RedisWindows:
    """``limits``' moving window over its Redis storage (imported only for this)."""

    def __init__(self, uri: str) -> None:
        from limits.aio.storage import Storage as AsyncStorage
        from limits.aio.strategies import MovingWindowRateLimiter
        from limits.storage import storage_from_string

        async_uri = uri if uri.startswith("async+") else f"async+{uri}"
        storage = storage_from_string(async_uri, implementation="redispy")
        assert isinstance(storage, AsyncStorage)
        self.storage: AsyncStorage = storage
        self._strategy = MovingWindowRateLimiter(self.storage)
        self._items: dict[Rate, Any] = {}

    async def hit(self, rate: Rate, kind: str, ident: str) -> tuple[bool, int, float]:
        """As :meth:`MovingWindows.hit`: allowed, hits left, when the oldest leaves."""
        item = self._items.get(rate)
        if item is None:
            from limits import parse

            item = self._items[rate] = parse(f"{rate.amount}/{rate.multiples} {rate.granularity}")
        allowed = await self._strategy.hit(item, "gateway", kind, ident)
        stats = await self._strategy.get_window_stats(item, "gateway", kind, ident)
        return allowed, stats.remaining, stats.reset_time

    async def reset(self) -> None:
        await self.storage.reset()

    async def close(self) -> None:
        client: Any = getattr(getattr(self.storage, "bridge", None), "storage", None)
        if client is not None:
            await client.aclose()


class RateLimiter:
    """Moving-window limits per kind of client, in memory or in Redis."""

    def __init__(self, settings: RateLimitSettings) -> None:
        self.settings = settings
        self.enabled = settings.enabled
        self.exempt = frozenset(settings.exempt_paths)
        self._rates: dict[ClientKind, list[Rate]] = {
            "anonymous": parse_rates(settings.per_ip),
            "loopback": parse_rates(settings.per_loopback),
            "authenticated": parse_rates(settings.per_token),
        }
        memory = settings.storage_uri.split("://", 1)[0] in ("memory", "async+memory")
        self._memory: MovingWindows | None = MovingWindows() if memory else None
        self._redis: RedisWindows | None = None if memory else RedisWindows(settings.storage_uri)
        self._last_error: str | None = None

    async def check(self, kind: ClientKind, ident: str) -> RateDecision:
        """Count one request of ``ident`` (an IP, or a token key when authenticated) under
        ``kind``'s limits; the tightest decides."""
        tightest: RateDecision | None = None
        try:
            for rate in self._rates[kind]:
                if self._memory is not None:
                    allowed, remaining, reset_at = self._memory.hit(
                        (kind, ident, rate.amount, rate.seconds), rate.amount, rate.seconds
                    )
                else:
                    assert self._redis is not None
                    allowed, remaining, reset_at = await self._redis.hit(rate, kind, ident)
                decision = RateDecision(allowed, rate.amount, remaining, reset_at - time.time())
                if not allowed:
                    emit(
                        EventType.RATE_LIMITED,
                        by=kind,
                        limit=str(rate),
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
        if self._memory is not None:
            self._memory.reset()
        if self._redis is not None:
            await self._redis.reset()

    def health(self) -> ComponentHealth:
        if not self.enabled:
            return ComponentHealth(HealthState.DISABLED)
        data: dict[str, object] = {"storage": self.settings.storage_uri.split("://")[0]}
        if self._last_error is not None:
            return ComponentHealth(HealthState.DEGRADED, self._last_error, data)
        return ComponentHealth(HealthState.UP, data=data)

    async def close(self) -> None:
        """Close the Redis connection pool (the memory storage holds nothing to close)."""
        if self._redis is not None:
            await self._redis.close()
