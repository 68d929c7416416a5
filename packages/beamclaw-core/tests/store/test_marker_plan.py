"""The markers a turn looks up (the last reset, the last summary or reset) are found by
``ix_messages_kind``, not by reading every row of the conversation: a turn must cost the
same at message 20 and message 2,000 (issue 18)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy.dialects import sqlite as sqlite_dialect

from beamclaw_core.store import message_log
from beamclaw_memory import Database


async def test_the_marker_lookups_use_the_kind_index(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    db = Database(f"sqlite:///{path}")
    try:
        await db.migrate()
    finally:
        await db.dispose()
    dialect = sqlite_dialect.dialect()  # pyright: ignore[reportUnknownMemberType]
    with sqlite3.connect(path) as conn:
        for statement in (message_log._LAST_RESET, message_log._LAST_MARKER):  # pyright: ignore[reportPrivateUsage]
            plan = statement.driver_plan(dialect)
            steps = conn.execute("EXPLAIN QUERY PLAN " + plan.sql, plan.values({"b_id": "c"}))
            detail = " / ".join(str(row[-1]) for row in steps)
            assert "ix_messages_kind" in detail and "SCAN" not in detail, detail
