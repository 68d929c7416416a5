"""WAL checkpoints of the SQLite database, off the writer thread.

Every connection of :class:`~beamclaw_memory.Database` runs with ``wal_autocheckpoint=0``.
Left on, SQLite checkpoints inside the COMMIT of whichever write takes the log past 1000
pages: on the single writer thread, so the turn committing at that moment waited for the
copy into the database file and its fsync (a 5-10 ms stall every ~50 turns on the
development machine). Instead one thread with its own connection runs a PASSIVE checkpoint
(it runs alongside readers and the writer and never waits for them) at most every
``interval`` seconds while writes happen, and a TRUNCATE checkpoint when the database
closes, so a clean shutdown leaves an empty log.

Invariants: at most one checkpoint runs at a time; a failing checkpoint is remembered
(:attr:`WalCheckpointer.last_error`) and retried at the next interval, never raised into a
writer.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

CHECKPOINT_INTERVAL_SECONDS = 1.0


class WalCheckpointer:
    """Checkpoints ``path``'s write-ahead log in the background (see the module)."""

    def __init__(
        self,
        path: str,
        *,
        interval: float = CHECKPOINT_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.interval = interval
        self._clock = clock
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="db-checkpoint")
        self._conn: sqlite3.Connection | None = None
        self._last = clock()
        self._running: Future[None] | None = None
        self.checkpoints = 0
        """Checkpoints completed (each copies what the log holds into the database)."""
        self.last_error: str | None = None

    def wrote(self) -> None:
        """A write committed: start a checkpoint when the interval has passed."""
        now = self._clock()
        if now - self._last < self.interval:
            return
        if self._running is not None and not self._running.done():
            return
        self._last = now
        self._running = self._thread.submit(self._checkpoint, "PASSIVE")

    def close(self) -> None:
        """Wait for a running checkpoint, fold the whole log in (TRUNCATE), stop the
        thread. Blocking: call it from a worker thread."""
        self._thread.submit(self._checkpoint, "TRUNCATE").result()
        self._thread.submit(self._close_connection).result()
        self._thread.shutdown()

    def _checkpoint(self, mode: str) -> None:
        try:
            if self._conn is None:
                self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
            self._conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        except sqlite3.Error as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            return
        self.last_error = None
        self.checkpoints += 1

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
