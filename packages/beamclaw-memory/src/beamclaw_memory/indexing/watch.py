"""Knowing that a workspace is unchanged without scanning it: Linux inotify.

Before every auto-context search the workspace is scanned (a ``stat`` per candidate file
and a directory listing). :class:`ChangeWatch` lets a pass skip that scan: a caller
:meth:`~ChangeWatch.arm`\\ s a key's directories *before* it scans them, reports with
:meth:`~ChangeWatch.settle` whether the pass was sound (complete, no file reached through
a symbolic link), and later asks :meth:`~ChangeWatch.quiet`.

Invariant — ``quiet(key)`` is True only when, since the sound pass armed ``key``:

* the kernel reported no event for a watched name (or for a watched directory itself) in
  any of ``key``'s directories: a write, truncate, ``chmod``, create, delete or rename
  (an editor's save-by-rename included), and — unlike ``stat`` — a second write within
  one timestamp tick;
* the event queue never overflowed (every key then counts as changed);
* the root still is the directory that was armed (same device and inode: a workspace
  renamed away and replaced, or reached through a symlink pointed elsewhere, is new);
* the root is on a local filesystem (:data:`LOCAL_FILESYSTEMS`): network and FUSE
  filesystems do not report changes made by other machines, so there it never is quiet.

Events are read without blocking when :meth:`quiet` is asked, so a change made before
the question is always seen. Where inotify cannot be used (not Linux, no instance left,
no watch left) every answer is False and callers scan as before: the watch only ever
saves work, never decides what is indexed.

Not thread-safe: one event loop uses it (the indexer's passes).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

LOCAL_FILESYSTEMS = frozenset(
    {
        "ext2",
        "ext3",
        "ext4",
        "xfs",
        "btrfs",
        "tmpfs",
        "overlay",
        "zfs",
        "f2fs",
        "jfs",
        "reiserfs",
        "nilfs2",
        "bcachefs",
    }
)
"""Filesystems whose every change reaches inotify (those written only by this kernel)."""

MOUNTINFO = "/proc/self/mountinfo"

# inotify(7) masks (stable kernel ABI)
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_MASK_ADD = 0x20000000
ENTRY_MASK = (
    IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
)
"""A directory where only which entries exist matters, not what is written to them (the
home holding a skills directory beside the database, whose every write would be an
event to read and drop)."""
WATCH_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)

Names = frozenset[str] | None
"""The entry names of a directory that matter (None: every one)."""


class Notifier(Protocol):
    """What :class:`ChangeWatch` needs of an inotify instance (``inotify_simple.INotify``:
    events with ``wd``, ``mask`` and ``name``)."""

    def add_watch(self, path: str, mask: int) -> int: ...

    def read(self, timeout: int | None = None) -> Iterable[Any]: ...

    def close(self) -> None: ...


def open_notifier() -> Notifier | None:
    """A non-blocking inotify instance, or None where there is none to be had."""
    try:
        from inotify_simple import INotify
    except ImportError:  # not Linux
        return None
    try:
        return INotify(nonblocking=True)  # type: ignore[return-value]
    except OSError:  # EMFILE: the user's instances are used up
        return None


def _unescape(field_: str) -> str:
    r"""A mountinfo path field (spaces and the like written as ``\040``)."""
    if "\\" not in field_:
        return field_
    return field_.encode().decode("unicode_escape").encode("latin-1").decode(errors="replace")


def filesystem_of(path: str, mountinfo: str = MOUNTINFO) -> str | None:
    """The type of the filesystem ``path`` (resolved) lies on, from ``mountinfo``; None
    when it cannot be told."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, kind = -1, None
    for line in lines:
        left, sep, right = line.partition(" - ")
        parts = left.split()
        if not sep or len(parts) < 5 or not right:
            continue
        point = _unescape(parts[4])
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:  # the last mount on the longest prefix wins
            best, kind = len(point), right.split()[0]
        elif inside and len(point) == best:
            kind = right.split()[0]
    return kind


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@dataclass(slots=True)
class _Armed:
    root: str
    identity: tuple[int, int]
    watches: dict[int, tuple[str, Names]] = field(default_factory=dict)
    """Watch descriptor -> its directory and the names that matter there."""
    quiet: bool = False
    touched: set[str] | None = field(default_factory=lambda: set[str]())
    """Paths with an event since this arming; None when that is not known (the queue
    overflowed, a watched directory itself changed, the root was replaced)."""


class ChangeWatch:
    """Per key, whether its directories changed since a sound pass armed it (see the
    module docstring). ``notifier``/``filesystem``: seams for tests (a fake inotify, a
    filesystem type)."""

    def __init__(
        self,
        notifier: Callable[[], Notifier | None] = open_notifier,
        filesystem: Callable[[str], str | None] = filesystem_of,
    ) -> None:
        self._open = notifier
        self._filesystem = filesystem
        self._notifier: Notifier | None = None
        self._opened = False
        self._keys: dict[Hashable, _Armed] = {}
        self._by_wd: dict[int, set[Hashable]] = {}
        self._local: dict[str, bool] = {}
        self.quiet_answers = 0
        """Times :meth:`quiet` said yes (a scan saved): the seam tests count through."""

    def _inotify(self) -> Notifier | None:
        if not self._opened:
            self._opened = True
            self._notifier = notifier = self._open()
            if notifier is not None:  # an owner that never calls close() leaks no descriptor
                weakref.finalize(self, notifier.close)
        return self._notifier

    def can_watch(self, root: str) -> bool:
        """Whether :meth:`quiet` can ever say yes for a key rooted at ``root`` (inotify is
        there and ``root`` is on a local filesystem)."""
        return self._inotify() is not None and self._is_local(root)

    def quiet(self, key: Hashable) -> bool:
        """Whether nothing of ``key``'s directories changed since its sound pass armed it."""
        armed = self._keys.get(key)
        if armed is None or not armed.quiet:
            return False
        self._drain()
        if armed.quiet and _identity(armed.root) != armed.identity:
            armed.quiet, armed.touched = False, None
        if not armed.quiet:
            return False
        self.quiet_answers += 1
        return True

    def arm(
        self,
        key: Hashable,
        root: str,
        directories: Mapping[str, Names],
        *,
        entries_only: Collection[str] = (),
    ) -> frozenset[str] | None:
        """Watch ``directories`` (path -> names that matter) for ``key``, whose pass is
        about to scan them; ``root`` is the directory whose identity must not change.
        Returns the paths the kernel reported written, created, moved or deleted since
        ``key`` was last armed — a pass must read those whatever their ``stat`` says (a
        write that kept size and mtime) — or None when which changed is not known (a
        queue overflow, a replaced root or directory): then a pass reads every file. Empty
        for a key never armed. A directory that does not exist is left out (its creation
        is an event in its parent, which the caller watches). ``entries_only``: those of
        ``directories`` where only the named entries' presence matters (subdirectories),
        watched without write events (:data:`ENTRY_MASK`). A directory several keys
        watch gets the union of their masks. Quiet only once :meth:`settle` says the pass
        was sound."""
        notifier = self._inotify()
        self._drain()  # what happened before this pass is this pass's to see
        previous = self._keys.get(key)
        identity = _identity(root)
        touched: frozenset[str] | None = frozenset()
        if previous is not None:
            known = previous.touched is not None and previous.identity == identity
            touched = frozenset(previous.touched or ()) if known else None
        self.disarm(key)
        if notifier is None or identity is None or not self._is_local(root):
            return touched
        armed = _Armed(root, identity)
        for directory, names in directories.items():
            try:
                mask = ENTRY_MASK if directory in entries_only else WATCH_MASK
                wd = notifier.add_watch(directory, mask | IN_MASK_ADD)
            except FileNotFoundError:
                continue
            except OSError:  # ENOSPC (no watch left), EACCES, not a directory …
                self._release(key, armed)
                return touched
            armed.watches[wd] = (directory, names)
            self._by_wd.setdefault(wd, set()).add(key)
        self._keys[key] = armed
        return touched

    def settle(self, key: Hashable, *, sound: bool) -> None:
        """The pass armed for ``key`` ended: quiet from now on if it was ``sound``."""
        armed = self._keys.get(key)
        if armed is not None:
            armed.quiet = sound

    def disarm(self, key: Hashable) -> None:
        """Stop answering for ``key`` (its next pass scans)."""
        armed = self._keys.pop(key, None)
        if armed is not None:
            self._release(key, armed)

    def close(self) -> None:
        """Forget every key and close the inotify instance."""
        self._keys.clear()
        self._by_wd.clear()
        if self._notifier is not None:
            self._notifier.close()
        self._notifier, self._opened = None, True

    def _release(self, key: Hashable, armed: _Armed) -> None:
        for wd in armed.watches:
            keys = self._by_wd.get(wd)
            if keys is not None:
                keys.discard(key)
        # the kernel watch stays (it may serve another key, and add_watch on the same
        # inode returns it again); its events for no key are read and dropped

    def _is_local(self, root: str) -> bool:
        local = self._local.get(root)
        if local is None:
            local = self._local[root] = self._filesystem(root) in LOCAL_FILESYSTEMS
        return local

    def _drain(self) -> None:
        notifier = self._notifier
        if notifier is None:
            return
        try:
            events = list(notifier.read(timeout=0))
        except OSError:  # a broken instance: nothing is quiet any more
            self._spoil_all()
            return
        for event in events:
            self._event(event.wd, event.mask, event.name)

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            self._spoil_all()
            return
        for key in self._by_wd.get(wd, ()):
            armed = self._keys.get(key)
            watched = armed.watches.get(wd) if armed is not None else None
            if armed is None or watched is None:
                continue
            directory, names = watched
            if not name:  # the directory itself: moved, deleted, its mode changed
                armed.quiet, armed.touched = False, None
            elif names is None or name in names:
                armed.quiet = False
                if armed.touched is not None:
                    armed.touched.add(os.path.join(directory, name))
        if mask & IN_IGNORED:  # the directory went away: its descriptor may be reused
            for key in self._by_wd.pop(wd, ()):
                armed = self._keys.get(key)
                if armed is not None:
                    armed.quiet, armed.touched = False, None
                    armed.watches.pop(wd, None)

    def _spoil_all(self) -> None:
        for armed in self._keys.values():
            armed.quiet, armed.touched = False, None
