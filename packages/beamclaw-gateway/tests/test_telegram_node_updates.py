"""Telegram webhook mode in a cluster, on a real Redis and a shared database: a node takes
up only its own stored updates; a gone node's are taken up by the sweeping node without
waiting for a node to start."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from beamclaw_core.cluster import hold_duty
from beamclaw_gateway.cluster_link import RedisLink
from beamclaw_gateway.telegram.node_updates import hold_node, sweep_gone_nodes
from beamclaw_gateway.telegram.store import StoredUpdate, UpdateLog
from beamclaw_memory import Database

pytestmark = pytest.mark.redis

BOT = 77
LEASE = 2.0
"""Long enough that a busy test machine never lets a live node's lease lapse."""


async def _no_floor(name: str) -> int:
    return 0


class Node:
    """One node's webhook side: its link, its update log, what it took up."""

    def __init__(self, name: str, redis_url: str, prefix: str, db: Database) -> None:
        self.link = RedisLink(
            redis_url, node_id=name, lease_seconds=LEASE, floor=_no_floor, prefix=prefix
        )
        self.log = UpdateLog(db, lambda: 0.0, name)
        self.taken: list[int] = []
        self.ready = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []

    async def take_up(self, updates: list[StoredUpdate]) -> None:
        self.taken += [u.update_id for u in updates]

    def start(self) -> None:
        sweep = hold_duty(
            self.link,
            f"telegram-updates:{BOT}",
            lambda: sweep_gone_nodes(self.link, BOT, self.log, self.take_up),
        )
        own = hold_node(self.link, BOT, self.log, self.take_up, self.ready.set)
        self.tasks = [asyncio.ensure_future(sweep), asyncio.ensure_future(own)]

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.tasks = []


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'tg.db'}")
    await database.migrate()
    try:
        yield database
    finally:
        await database.dispose()


async def test_a_node_takes_up_its_own_updates_and_a_gone_nodes_without_a_restart(
    redis_url: str, db: Database
) -> None:
    prefix = f"bc-test-{uuid.uuid4().hex[:8]}"
    n1, n2 = Node("n1", redis_url, prefix, db), Node("n2", redis_url, prefix, db)
    try:
        assert await n1.log.claim(1, {"update_id": 1}, 42, 1)  # n1 stored it, then restarts
        n1.start()
        await asyncio.wait_for(n1.ready.wait(), 5)
        assert await n1.log.claim(2, {"update_id": 2}, 42, 2)  # n1 is handling it now
        n2.start()
        await asyncio.wait_for(n2.ready.wait(), 5)
        await asyncio.sleep(LEASE * 1.2)  # two sweeps: n1 is alive
        assert n1.taken == [1]
        assert n2.taken == [], "a live node's updates are not taken up"
        await n1.stop()  # n1 is gone (stopped, or dead past its lease)
        for _ in range(100):
            if n2.taken:
                break
            await asyncio.sleep(0.1)
        assert n2.taken == [1, 2]  # 1 was never marked done: taken up again
        assert await n2.log.handlers() == {"n2"}
    finally:
        for node in (n1, n2):
            await node.stop()
            await node.link.close()
