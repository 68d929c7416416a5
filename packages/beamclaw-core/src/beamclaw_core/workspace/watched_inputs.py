"""A prompt build's inputs, kept while inotify says none of them changed.

Every turn's system prompt is assembled from the agent's workspace files and skills, and
the stat caches (:class:`~beamclaw_core.workspace.file_cache.FileTextCache`,
:class:`~beamclaw_core.skills.SkillCatalog`) ``stat`` each of them to learn that nothing
changed (about seventeen calls). :class:`WatchedInputs` remembers, per key, what the last
*verified* build read — each file's text by path, and the skills — and hands them out
while a :class:`~beamclaw_memory.ChangeWatch` reports nothing in their directories, so
such a build makes no ``stat`` at all.

Verification, the only way inputs become kept (:meth:`WatchedInputs.arm` then
:meth:`WatchedInputs.settle`): after a build, the directories its inputs came from are
armed — each file's directories up to the agent's, by name; each skills directory whole
(and by name in its parent); each skill's directory by ``SKILL.md``; a directory that
only leads to inputs, for its entries and not for writes — and only *then* are
the inputs checked once more through the stat caches (the same text objects, the same
skills tuple, nothing too recent to trust). A change before that check fails the check; a
change after it is an event. Inputs reached through a symbolic link, with another hard
link, or outside the agent's directory are never kept (their changes may not reach the
watched directories), nor is anything where the watch cannot answer (no inotify, a
network filesystem): then every build ``stat``\\ s as before.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

from beamclaw_core.errors import BeamclawCoreError
from beamclaw_core.skills.model import Skill
from beamclaw_core.skills.parser import SKILL_FILE
from beamclaw_core.workspace.sections import ReadText
from beamclaw_memory import ChangeWatch


class OutsideInputsError(BeamclawCoreError):
    """A build from kept inputs needed a file the verified build did not read (a new
    day's log, another home): it is built afresh."""


@dataclass(frozen=True, slots=True)
class Inputs:
    """What one verified build read: file texts by path, and the skills (None: the build
    had skills off)."""

    texts: Mapping[str, str | None]
    skills: tuple[Skill, ...] | None

    def read(self, path: str) -> str | None:
        """The text the verified build read at ``path``.

        Raises:
            OutsideInputsError: it read nothing there.
        """
        try:
            return self.texts[path]
        except KeyError:
            raise OutsideInputsError(path) from None


class Recorder:
    """What one build read: :meth:`reading` wraps its ``read`` (one build at a time; its
    worker thread may be the one recording)."""

    def __init__(self) -> None:
        self.texts: dict[str, str | None] = {}
        self.skills: tuple[Skill, ...] | None = None

    def reading(self, read: ReadText) -> ReadText:
        def recorded(path: str) -> str | None:
            text = self.texts[path] = read(path)
            return text

        return recorded


def _single(path: str) -> bool:
    """Whether ``path`` is absent or a file reached by no symlink and no other hard link."""
    try:
        st = os.lstat(path)
    except OSError:
        return True
    return not stat.S_ISLNK(st.st_mode) and (stat.S_ISDIR(st.st_mode) or st.st_nlink == 1)


def _within(path: str, root: str) -> bool:
    return path.startswith(root.rstrip(os.sep) + os.sep)


RETRY_SECONDS = 10.0
"""How long inputs that could not be kept (a link, no inotify) are not tried again: each
try costs a second pass of ``stat`` calls."""


class WatchedInputs:
    """Per key, the inputs of the last verified build while its directories stay quiet.
    ``clock``: monotonic seconds (tests move it)."""

    def __init__(
        self, watch: ChangeWatch | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.watch = watch if watch is not None else ChangeWatch()
        self.clock = clock
        self._kept: dict[Hashable, Inputs] = {}
        self._retry_at: dict[Hashable, float] = {}

    def worth_trying(self, key: Hashable, root: str) -> bool:
        """Whether a build of ``key`` should be verified: the watch can see ``root`` and
        ``key``'s inputs were not found unkeepable in the last :data:`RETRY_SECONDS`."""
        retry = self._retry_at.get(key)
        if retry is not None and self.clock() < retry:
            return False
        return self.watch.can_watch(root)

    def kept(self, key: Hashable) -> Inputs | None:
        """The inputs of ``key``'s verified build, if nothing of them changed since."""
        inputs = self._kept.get(key)
        if inputs is None:
            return None
        if self.watch.quiet(key):
            return inputs
        del self._kept[key]
        return None

    def drop(self, key: Hashable) -> None:
        """Forget ``key``'s inputs (its next build is verified again)."""
        self._kept.pop(key, None)
        self.watch.disarm(key)

    def arm(
        self,
        key: Hashable,
        root: str,
        texts: Mapping[str, str | None],
        skill_dirs: Sequence[str] = (),
        skill_files: Sequence[str] = (),
    ) -> bool:
        """Watch the directories of a build's inputs (before they are checked again);
        False when they cannot be kept (a link, a path outside ``root``)."""
        self.drop(key)
        dirs: dict[str, set[str] | None] = {}
        # directories with an input file or watched whole; the others only lead to one,
        # so no write in them matters (the home: its skills directory beside the database)
        read_in: set[str] = set()

        def by_name(directory: str, name: str, *, content: bool = False) -> None:
            names = dirs.setdefault(directory, set())
            if names is not None:
                names.add(name)
            if content:
                read_in.add(directory)

        unkeepable = any(not _within(p, root) or not _single(p) for p in texts) or any(
            not _single(p) for p in skill_files
        )
        if unkeepable:
            self._retry_at[key] = self.clock() + RETRY_SECONDS
            return False
        self._retry_at.pop(key, None)
        for path in texts:
            child, content = path, True
            while child != root:
                parent = os.path.dirname(child)
                by_name(parent, os.path.basename(child), content=content)
                child, content = parent, False
        for directory in skill_dirs:
            dirs[directory] = None
            read_in.add(directory)
            by_name(os.path.dirname(directory), os.path.basename(directory))
        for path in skill_files:
            by_name(os.path.dirname(path), SKILL_FILE, content=True)
        self.watch.arm(
            key,
            root,
            {d: None if n is None else frozenset(n) for d, n in dirs.items()},
            entries_only=dirs.keys() - read_in,
        )
        return True

    def settle(self, key: Hashable, inputs: Inputs | None) -> None:
        """The check after :meth:`arm`: keep ``inputs`` (None: the check failed)."""
        self.watch.settle(key, sound=inputs is not None)
        if inputs is not None:
            self._kept[key] = inputs
