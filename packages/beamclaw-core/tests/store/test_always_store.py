"""The standing-grant store on real (migrated) SQLite and PostgreSQL databases."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from beamclaw_core.approvals import AlwaysAllowlist
from beamclaw_memory import Database


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    await database.migrate()
    yield database
    await database.dispose()


async def test_a_repeated_grant_keeps_the_first(db: Database) -> None:
    now = [1.0]
    grants = AlwaysAllowlist(db, clock=lambda: now[0])
    first = await grants.grant("a", "ann", "write", session_id="s1")
    now[0] = 2.0
    again = await grants.grant("a", "ann", "write", session_id="s2")
    # two processes answering ``always`` at once: one row, both see the same grant
    other = AlwaysAllowlist(db, clock=lambda: now[0])
    raced = await asyncio.gather(
        *(
            store.grant("a", "ann", "edit", session_id=f"s{i}")
            for i, store in enumerate([grants, other] * 3)
        )
    )
    assert again == first and (first.granted_at, first.session_id) == (1.0, "s1")
    assert len(set(raced)) == 1
    assert [g.tool for g in await grants.list()] == ["edit", "write"]
    assert grants.tools("a", "ann") == {"edit", "write"}


async def test_the_cache_is_this_process_view_until_load(db: Database) -> None:
    ours = AlwaysAllowlist(db, clock=lambda: 1.0)
    other = AlwaysAllowlist(db, clock=lambda: 1.0)  # another process on the same database
    await ours.load()
    await other.grant("a", "ann", "write")
    assert ours.tools("a", "ann") == frozenset(), "no query per lookup"
    await ours.load()
    assert ours.tools("a", "ann") == {"write"}
    await other.grant("a", "bob", "write")
    assert await ours.revoke("a", "ann") == 1
    assert ours.tools("a", "ann") == frozenset()
    assert [(g.user_id, g.tool) for g in await ours.list(agent_id="a")] == [("bob", "write")]
