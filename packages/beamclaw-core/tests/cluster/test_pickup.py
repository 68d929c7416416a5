"""Taking up a session at a sweep or a wake: a node that cannot own it never loads it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from beamclaw_core.cluster.node import ClusterNode, LaneHost
from beamclaw_core.sessions.lane import SessionLane
from beamclaw_core.store import ConversationStore
from beamclaw_memory import Database

from .one_lease import OneLease


async def test_a_session_another_node_owns_is_not_loaded_here(tmp_path: Path) -> None:
    """A lane loaded only to find the lease taken would sit in the map for the claim's
    round trip; a request taking it up then would be left holding a lane that leaves
    memory, and never hear the owner's answer (a REST reset forwarded from it hung)."""
    loads: list[str] = []

    async def load(session_id: str) -> SessionLane | None:
        loads.append(session_id)
        return None

    host = LaneHost(
        lock=asyncio.Lock(),
        loaded=lambda _sid: None,
        loaded_ids=list,
        load=load,
        refresh=_never,
        run=lambda _lane: None,
    )
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    try:
        node = ClusterNode(OneLease(holder="other"), ConversationStore(db), host, asyncio.sleep)
        assert await node.pickup("s1", restart=True) is False
        assert loads == []  # the lease was asked first
        free = OneLease()
        node = ClusterNode(free, ConversationStore(db), host, asyncio.sleep)
        assert await node.pickup("gone", restart=False) is False
        assert loads == ["gone"] and free.holder is None  # claimed, not there: given back
    finally:
        await db.dispose()


async def _never(_lane: SessionLane) -> None:
    raise AssertionError("no lane to refresh")
