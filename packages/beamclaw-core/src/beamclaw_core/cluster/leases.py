"""The leases one node holds, renewed in the background, its store's fences in step.

Invariants: a lease is held only between a granted :meth:`SessionLeases.claim` and its
release or loss; while held, the store writes under its epoch
(:class:`~beamclaw_core.store.Fences`); claims of one node are serialised, so a node never
refuses itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from loguru import logger

from beamclaw_core.cluster.lease import Claim, claim_after, renew_interval
from beamclaw_core.cluster.ports import ClusterLink
from beamclaw_core.store import Fences


class SessionLeases:
    """Claims, renews and releases session leases through a :class:`ClusterLink`."""

    def __init__(
        self,
        link: ClusterLink,
        fences: Fences,
        sleep: Callable[[float], Awaitable[None]],
        on_lost: Callable[[str], Awaitable[None]],
    ) -> None:
        self._link = link
        self._fences = fences
        self._sleep = sleep
        self._on_lost = on_lost
        self._held: dict[str, int] = {}
        self._last: dict[str, int] = {}
        """The last epoch granted per session, kept after release (cache validity)."""
        self._lock = asyncio.Lock()

    def held(self, session_id: str) -> bool:
        return session_id in self._held

    async def claim(self, session_id: str) -> Claim | None:
        """Own ``session_id`` (at once when already held); None: another node does."""
        async with self._lock:
            epoch = self._held.get(session_id)
            if epoch is not None:
                return Claim(session_id, epoch, stale=False)
            granted = await self._link.acquire(session_id)
            if granted is None:
                return None
            claim = claim_after(session_id, self._last.get(session_id), granted)
            self._held[session_id] = self._last[session_id] = granted
            self._fences.hold(session_id, granted)
            return claim

    async def release(self, session_id: str) -> None:
        async with self._lock:
            epoch = self._held.pop(session_id, None)
            if epoch is None:
                return
            self._fences.drop(session_id)
            await self._link.release(session_id, epoch)

    async def release_all(self) -> None:
        for session_id in list(self._held):
            await self.release(session_id)

    async def renew_forever(self) -> None:
        """Renew every held lease three times per lease; a lost one is dropped and
        reported to ``on_lost`` (its lane must stop: its writes are refused anyway)."""
        while True:
            await self._sleep(renew_interval(self._link.lease_seconds))
            for session_id, epoch in list(self._held.items()):
                if await self._link.renew(session_id, epoch):
                    continue
                async with self._lock:
                    if self._held.get(session_id) != epoch:
                        continue
                    del self._held[session_id]
                    self._fences.drop(session_id)
                logger.warning("{}: lease (epoch {}) lost to another node", session_id, epoch)
                await self._on_lost(session_id)
