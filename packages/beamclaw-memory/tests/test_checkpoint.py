"""WAL checkpoints run in the background, never inside a writer's commit."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from sqlalchemy import text

from beamclaw_memory import Database
from beamclaw_memory.checkpoint import WalCheckpointer


async def test_writes_do_not_checkpoint_and_dispose_truncates(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    db = Database(f"sqlite:///{path}")
    assert db.checkpointer is not None
    db.checkpointer.interval = 3600.0  # no background checkpoint during this test
    await db.write(lambda c: c.execute(text("CREATE TABLE t (x TEXT)")))
    for i in range(60):
        await db.write(
            lambda c, i=i: c.execute(text("INSERT INTO t VALUES (:x)"), {"x": "x" * 4000})
        )
    assert await db.read(lambda c: c.execute(text("PRAGMA wal_autocheckpoint")).scalar()) == 0
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 60 * 4000  # every page still in the log
    await db.dispose()
    assert not wal.exists() or wal.stat().st_size == 0  # folded in at close
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (60,)
    conn.close()


async def test_the_checkpointer_runs_after_writes_once_the_interval_passed(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    now = [0.0]
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE t (x TEXT)")
    checkpointer = WalCheckpointer(str(path), interval=1.0, clock=lambda: now[0])
    try:
        writer.execute("INSERT INTO t VALUES ('a')")
        checkpointer.wrote()  # too early: nothing runs
        assert checkpointer.checkpoints == 0
        now[0] = 1.5
        checkpointer.wrote()
        for _ in range(500):
            if checkpointer.checkpoints:
                break
            await asyncio.sleep(0.01)
        assert checkpointer.checkpoints == 1
        assert checkpointer.last_error is None
        checkpointer.wrote()  # within the interval again: no second checkpoint
        assert checkpointer.checkpoints == 1
    finally:
        await asyncio.to_thread(checkpointer.close)
        writer.close()
