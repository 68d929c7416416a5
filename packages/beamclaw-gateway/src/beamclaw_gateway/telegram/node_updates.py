"""Webhook mode in a cluster: each node takes up its own stored updates; one node takes
up those of nodes that are gone.

Every node receives webhook updates and records itself as each one's handler
(``telegram_updates.node``). Invariants:

* A node takes webhook updates only while it holds its node lease
  ``telegram-node:<bot>:<node>`` (:func:`hold_node`; before, the channel answers 503 and
  Telegram delivers again), and it takes up its own unfinished updates once, when it
  first holds it — never another node's.
* The holder of the duty ``telegram-updates:<bot>`` (:func:`sweep_gone_nodes`) looks every
  sweep interval at the nodes with unfinished updates: one whose node lease it can take
  is gone (dead past its lease, or stopped); under that lease it makes itself the handler
  of those updates and takes them up, so a restarting node of the same name cannot take
  them up at the same time. Updates no node recorded (stored before cluster mode) are
  taken up the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from loguru import logger

from beamclaw_core.cluster import ClusterLink, hold_duty, sweep_interval
from beamclaw_gateway.telegram.store import StoredUpdate, UpdateLog

TakeUp = Callable[[list[StoredUpdate]], Awaitable[None]]
"""Acts on stored updates (:meth:`~beamclaw_gateway.telegram.inbound.Inbound.take_up`)."""


def node_lease(bot_id: int, node: str) -> str:
    return f"telegram-node:{bot_id}:{node}"


async def hold_node(
    link: ClusterLink, bot_id: int, log: UpdateLog, take_up: TakeUp, ready: Callable[[], None]
) -> None:
    """Hold this node's lease while the channel runs: the first time it is held, call
    ``ready`` (webhook updates are taken from then on) and take up what this node stored
    before and did not finish."""
    first = True

    async def alive() -> None:
        nonlocal first
        if first:
            first = False
            own = await log.unfinished(mine=True)  # read before new updates can arrive
            ready()
            await take_up(own)
        await asyncio.Event().wait()

    await hold_duty(link, node_lease(bot_id, link.node_id), alive)


async def sweep_gone_nodes(link: ClusterLink, bot_id: int, log: UpdateLog, take_up: TakeUp) -> None:
    """Take up the unfinished updates of gone nodes, every sweep interval (run it as the
    duty ``telegram-updates:<bot>``)."""
    while True:
        for node in await log.handlers():
            if node == link.node_id:
                continue
            adopted = await _adopt(link, bot_id, log, node)
            if adopted:
                logger.info(
                    "telegram: taking up {} update(s) of node {}, which is gone",
                    len(adopted),
                    node or "(unrecorded)",
                )
                await take_up(adopted)
        await asyncio.sleep(sweep_interval(link.lease_seconds))


async def _adopt(
    link: ClusterLink, bot_id: int, log: UpdateLog, node: str | None
) -> list[StoredUpdate]:
    if node is None:
        return await log.adopt(None)
    name = node_lease(bot_id, node)
    epoch = await link.acquire(name)
    if epoch is None:
        return []  # the node is alive
    try:
        return await log.adopt(node)
    finally:
        await link.release(name, epoch)
