"""``core_0002`` (standing ``/always`` grants) and later revisions upgrade a database that already holds
conversations without losing any of them, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection

import beamclaw_memory
from beamclaw_core.approvals import AlwaysAllowlist
from beamclaw_core.identities import Identities
from beamclaw_core.loop.states import Idle, state_to_json
from beamclaw_core.messages import Message
from beamclaw_core.store import ConversationStore
from beamclaw_memory import Database, Unit, migration_locations


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


def _old_conversation(unit: Unit) -> None:
    """Conversation ``c`` with two messages, in core_0001's columns (no owner epoch)."""
    unit.execute(
        sa.text(
            "INSERT INTO conversations (id, agent_id, user_id, channel, parent_id, state,"
            " state_data, last_activity_at, state_updated_at, created_at, updated_at)"
            " VALUES ('c', 'default', 'local:ann', 'tui', NULL, 'idle', :state,"
            " 2.0, 2.0, 1.0, 2.0)"
        ).bindparams(sa.bindparam("state", type_=sa.JSON)),
        {"state": state_to_json(Idle())},
    )
    for seq, message in enumerate((Message.user("hi"), Message.assistant("yo")), start=1):
        unit.execute(
            sa.text(
                "INSERT INTO messages (conversation_id, seq, kind, role, content, created_at)"
                " VALUES ('c', :seq, 'message', :role, :content, 2.0)"
            ).bindparams(sa.bindparam("content", type_=sa.JSON)),
            {
                "seq": seq,
                "role": message.role.value,
                "content": message.model_dump(mode="json", exclude_defaults=True),
            },
        )


async def test_upgrade_keeps_conversations_and_adds_grants(database_url: str) -> None:
    db = Database(database_url)
    try:
        await db.write(lambda unit: _upgrade_core_to("core_0001", unit.connection))
        assert await db.current_heads() == {"core_0001"}
        await db.write(_old_conversation)  # as the code of core_0001's time wrote it

        await db.migrate()

        assert "core_0005" in await db.current_heads()  # core_0002, 0003, 0004, then 0005
        store = ConversationStore(db)
        rows = await store.messages("c")
        assert [r.message.text for r in rows if r.message] == ["hi", "yo"]
        # core_0004: old rows carry epoch 0, which a single node keeps writing under
        await store.commit("c", Idle(), [Message.user("again")], now=3.0)
        assert len(await store.messages("c")) == 3
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
