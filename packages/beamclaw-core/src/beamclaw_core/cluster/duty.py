"""A duty done by one node of the cluster at a time, under a lease (e.g. a bot's poll).

Invariants: ``work`` runs only while this node holds the lease ``name`` (the same leases
and epochs as sessions', :class:`~beamclaw_core.cluster.ClusterLink`); the lease is
renewed three times per lease while it runs, and a renewal that fails cancels ``work``
at once (another node may have it by then). A node without the lease tries again every
renewal interval, so when the holder dies another node starts the duty within about one
lease. On the single node (:class:`~beamclaw_core.cluster.LocalLink`) the lease is always
granted: ``work`` simply runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from loguru import logger

from beamclaw_core.cluster.lease import renew_interval
from beamclaw_core.cluster.ports import ClusterLink


async def hold_duty(
    link: ClusterLink,
    name: str,
    work: Callable[[], Awaitable[None]],
    *,
    on_standby: Callable[[], None] = lambda: None,
) -> None:
    """Run ``work`` whenever this node holds the lease ``name``, until it returns (then
    the lease is given up and this returns) or raises (so does this); ``on_standby``
    is called each time another node holds it. Cancelling cancels ``work`` and gives the
    lease up."""
    interval = renew_interval(link.lease_seconds)
    while True:
        epoch = await link.acquire(name)
        if epoch is None:
            on_standby()
            await asyncio.sleep(interval)
            continue
        logger.info("cluster: this node took the duty {} (epoch {})", name, epoch)
        task = asyncio.ensure_future(work())
        try:
            if await _renew_while(link, name, epoch, task, interval):
                task.result()  # raises what ``work`` raised
                return
            logger.warning("cluster: the duty {} (epoch {}) was lost; standing by", name, epoch)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await link.release(name, epoch)


async def _renew_while(
    link: ClusterLink, name: str, epoch: int, task: asyncio.Future[None], interval: float
) -> bool:
    """Renew the lease until ``task`` ends (True) or a renewal fails (False)."""
    while True:
        done, _ = await asyncio.wait({task}, timeout=interval)
        if done:
            return True
        if not await link.renew(name, epoch):
            return False
