"""Nodes starting together on one PostgreSQL database migrate it once."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_memory import Database

pytestmark = pytest.mark.postgres


async def test_concurrent_migrations_apply_once(postgres_url: str) -> None:
    nodes = [Database(postgres_url) for _ in range(3)]
    try:
        heads = await asyncio.gather(*(db.migrate() for db in nodes))
        assert heads[0] == heads[1] == heads[2]
        assert await nodes[0].current_heads() == set(heads[0])
    finally:
        for db in nodes:
            await db.dispose()
