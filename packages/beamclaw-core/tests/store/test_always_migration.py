"""``core_0002`` (standing ``/always`` grants) upgrades a database that already holds
conversations without losing any of them, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection

import beamclaw_memory
from beamclaw_core.approvals import AlwaysAllowlist
from beamclaw_core.identities import Identities
from beamclaw_core.loop.states import Idle
from beamclaw_core.messages import Message
from beamclaw_core.store import ConversationStore
from beamclaw_memory import Database, migration_locations


def _upgrade_core_to(revision: str, connection: Connection) -> None:
    """Alembic over the shared env.py, stopping the core branch at ``revision``."""
    cfg = Config()
    cfg.set_main_option(
        "script_location", str(Path(beamclaw_memory.__file__).parent / "migrations")
    )
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", os.pathsep.join(migration_locations()))
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, revision)


async def test_upgrade_keeps_conversations_and_adds_grants(database_url: str) -> None:
    db = Database(database_url)
    try:
        await db.write(lambda unit: _upgrade_core_to("core_0001", unit.connection))
        assert await db.current_heads() == {"core_0001"}
        store = ConversationStore(db)
        await store.ensure("c", agent_id="default", user_id="local:ann", channel="tui", now=1.0)
        await store.commit("c", Idle(), [Message.user("hi"), Message.assistant("yo")], now=2.0)

        await db.migrate()

        assert "core_0003" in await db.current_heads()  # core_0002, then core_0003
        rows = await ConversationStore(db).messages("c")
        assert [r.message.text for r in rows if r.message] == ["hi", "yo"]
        grants = AlwaysAllowlist(db, clock=lambda: 3.0)
        await grants.load()
        await grants.grant("default", "local:ann", "write", session_id="c")
        assert [(g.tool, g.session_id, g.granted_at) for g in await grants.list()] == [
            ("write", "c", 3.0)
        ]
        # core_0003: an account that brought history gives it to the person it joins
        identities = Identities(db, clock=lambda: 4.0)
        await identities.load()
        link = await identities.link("local:ann", "ann")
        assert (link.person_id, link.session_key) == ("ann", "local:ann")
    finally:
        await db.dispose()
