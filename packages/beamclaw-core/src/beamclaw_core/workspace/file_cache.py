"""Workspace file texts cached by ``stat``, so a turn's prompt does not re-read its files.

:class:`FileTextCache` remembers the text of each file it read together with the file's
identity (device, inode, size, mtime and ctime in nanoseconds). A later read first
``stat``\\ s the file: same identity, same text; anything different (edited, replaced by
a rename, truncated, created, deleted) and the file is read again.

Invariant — a change is never missed, even one within the filesystem's timestamp
granularity (git's "racy clean" problem): an entry is trusted only when the file's
ctime (which, unlike the mtime, no one can set back) was more than ``racy_window_ns``
older than the moment the read began. A write after that moment gives the file a ctime
at least that recent, so its identity differs from the cached one. A file changed within
the window is read again each time until it has settled.

:meth:`FileTextCache.cached` is the read-free variant: it only ``stat``\\ s and raises
:class:`CacheMiss` when the text would have to be read, so a caller can assemble a
prompt on the event loop when everything is cached and fall back to a worker thread
otherwise.

Paths may be given as ``str`` or :class:`~pathlib.Path`; the hot path (a hit) is one
``os.stat`` and a dictionary lookup, with no :mod:`pathlib` work and no lock (entries
are immutable tuples, and a dictionary lookup is atomic).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from beamclaw_core.errors import BeamclawCoreError

RACY_WINDOW_NS = 2_000_000_000
"""Files modified this recently are not trusted from the cache (2 s covers the coarsest
common mtime granularity, FAT's)."""

MAX_ENTRIES = 1_024

_Identity = tuple[int, int, int, int, int]

StrPath = str | Path


class CacheMiss(BeamclawCoreError):  # noqa: N818 - a control-flow signal, not an error
    """Raised by :meth:`FileTextCache.cached` when a file's text must be read."""

    def __init__(self, path: StrPath) -> None:
        super().__init__(str(path))
        self.path = Path(path)


def _identity(st: os.stat_result) -> _Identity:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def stat_identity(path: StrPath) -> _Identity | None:
    """Device, inode, size, mtime and ctime (ns) of ``path`` (symlinks followed), or None
    when it cannot be ``stat``\\ ed. An identity taken while :func:`settled` holds
    changes with any later change to the path (the ctime moves forward)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(identity: _Identity | None, now_ns: int, racy_window_ns: int = RACY_WINDOW_NS) -> bool:
    """Whether a path with ``identity`` last changed more than ``racy_window_ns`` before
    ``now_ns`` (an absent path is settled: it has no timestamps to be fooled by)."""
    return identity is None or max(identity[3], identity[4]) < now_ns - racy_window_ns


class FileTextCache:
    """Texts of small workspace files, re-read only when their ``stat`` changes.

    ``read(path)`` behaves like reading the file as UTF-8 (undecodable bytes replaced):
    it returns None for a missing, unreadable or non-regular file and for one holding
    only whitespace. Thread-safe: entries are immutable tuples, written under a lock and
    read without one.
    """

    def __init__(
        self, racy_window_ns: int = RACY_WINDOW_NS, *, clock: Callable[[], int] = time.time_ns
    ) -> None:
        self.racy_window_ns = racy_window_ns
        self.clock = clock
        """Wall clock in nanoseconds, the base of file timestamps (tests may age files)."""
        self._entries: dict[str, tuple[_Identity, str | None]] = {}
        self._lock = threading.Lock()

    def _lookup(self, path: StrPath) -> tuple[bool, str | None, os.stat_result | None]:
        """``(hit, text, stat)``: a hit needs no read; ``stat`` is None when absent."""
        try:
            st = os.stat(path)
        except OSError:
            return True, None, None
        if not stat.S_ISREG(st.st_mode):
            return True, None, None
        entry = self._entries.get(path if isinstance(path, str) else str(path))
        if entry is not None and entry[0] == (
            st.st_dev,
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
        ):
            return True, entry[1], st
        return False, None, st

    def cached(self, path: StrPath) -> str | None:
        """The file's text without reading it (stats only).

        Raises:
            CacheMiss: the text is not cached, stale or too recent to trust.
        """
        hit, text, _st = self._lookup(path)
        if not hit:
            raise CacheMiss(path)
        return text

    def read(self, path: StrPath) -> str | None:
        """The file's text: from the cache when unchanged, else read (and cached)."""
        started = self.clock()
        hit, text, st = self._lookup(path)
        if hit:
            return text
        assert st is not None
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                raw = handle.read()
        except OSError:  # vanished or unreadable since the stat: skipped, not cached
            return None
        text = raw if raw.strip() else None
        try:
            after = os.stat(path)
        except OSError:
            return text
        settled = max(st.st_mtime_ns, st.st_ctime_ns) < started - self.racy_window_ns
        if settled and _identity(after) == _identity(st):
            with self._lock:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[path if isinstance(path, str) else str(path)] = (
                    _identity(st),
                    text,
                )
        return text

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
