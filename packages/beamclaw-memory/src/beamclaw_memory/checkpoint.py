"""WAL checkpoints of the SQLite database, off the writer thread.

Every connection of :class:`~beamclaw_memory.Database` runs with ``wal_autocheckpoint=0``.
Left on, SQLite checkpoints inside the COMMIT of whichever write takes the log past 1000
pages: on the single writer thread, so the turn committing at that moment waited for the
copy into the database file and its fsync (a 5-10 ms stall every ~50 turns on the
development machine). Instead one thread with its own connection runs a PASSIVE checkpoint
(it runs alongside readers and the writer and never waits for them) at most every
``interval`` seconds while writes happen, and a TRUNCATE checkpoint when the database
closes, so a clean shutdown leaves an empty log.

A PASSIVE checkpoint copies the log into the database but does not rewind it: only a write
that *begins* after a checkpoint copied every frame starts the log over, and under steady
writes one always commits while the checkpoint runs, so the log grew without end (150 MB
over 2,000 turns, and every read searching a longer log index). So when a passive pass
copied all it saw and the log holds at least ``restart_frames`` frames, a RESTART
checkpoint follows: it takes the write lock for what the passive pass left (a few frames),
waits at most :data:`RESTART_WAIT_MS` for readers of the old log, and makes the next write
start the log from its beginning (``journal_size_limit`` then trims the file).

Invariants: at most one checkpoint runs at a time; a failing checkpoint is remembered
(:attr:`WalCheckpointer.last_error`) and retried at the next interval, never raised into a
writer; a restart never waits on a reader for longer than :data:`RESTART_WAIT_MS`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

CHECKPOINT_INTERVAL_SECONDS = 1.0
RESTART_FRAMES = 1000
"""A log of at least this many frames (SQLite's own automatic checkpoint size, ≈ 4 MB of
4 KB pages) is rewound after a complete passive checkpoint."""
RESTART_WAIT_MS = 20
"""How long a RESTART checkpoint may wait (holding the write lock) for readers."""


class WalCheckpointer:
    """Checkpoints ``path``'s write-ahead log in the background (see the module)."""

    def __init__(
        self,
        path: str,
        *,
        interval: float = CHECKPOINT_INTERVAL_SECONDS,
        restart_frames: int = RESTART_FRAMES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.interval = interval
        self.restart_frames = restart_frames
        self._clock = clock
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="db-checkpoint")
        self._conn: sqlite3.Connection | None = None
        self._last = clock()
        self._running: Future[None] | None = None
        self.checkpoints = 0
        """Checkpoints completed (each copies what the log holds into the database)."""
        self.restarts = 0
        """RESTART checkpoints that completed (the next write starts the log over)."""
        self.last_error: str | None = None

    def wrote(self) -> None:
        """A write committed: start a checkpoint when the interval has passed."""
        now = self._clock()
        if now - self._last < self.interval:
            return
        if self._running is not None and not self._running.done():
            return
        self._last = now
        self._running = self._thread.submit(self._passive)

    def close(self) -> None:
        """Wait for a running checkpoint, fold the whole log in (TRUNCATE), stop the
        thread. Blocking: call it from a worker thread."""
        self._thread.submit(self._checkpoint, "TRUNCATE").result()
        self._thread.submit(self._close_connection).result()
        self._thread.shutdown()

    def _passive(self) -> None:
        copied = self._checkpoint("PASSIVE")
        if copied is None:
            return
        busy, frames, done = copied
        if busy or frames < self.restart_frames or done < frames:
            return  # an old reader kept frames back: a restart would hold writers for it
        restarted = self._checkpoint("RESTART", wait_ms=RESTART_WAIT_MS)
        if restarted is not None and not restarted[0]:
            self.restarts += 1

    def _checkpoint(self, mode: str, *, wait_ms: int = 10_000) -> tuple[int, int, int] | None:
        """``(busy, frames in the log, frames copied)``, waiting at most ``wait_ms`` for a
        lock; None: it failed."""
        try:
            if self._conn is None:
                self._conn = sqlite3.connect(self.path, isolation_level=None)
            self._conn.execute(f"PRAGMA busy_timeout={wait_ms}")
            row = self._conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        except sqlite3.Error as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        self.last_error = None
        self.checkpoints += 1
        busy, frames, done = row
        return int(busy), int(frames), int(done)

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
