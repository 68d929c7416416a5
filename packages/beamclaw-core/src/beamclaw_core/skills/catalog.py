"""Skills per agent, discovered again only when a SKILL.md or a skills directory changed.

:class:`SkillCatalog` keeps, per agent, the skills :func:`discover_skills` returned and a
fingerprint of what discovery reads: for each skills directory (bundled, global,
per-agent) the names of its entries, and the ``stat`` identity (device, inode, size,
mtime, ctime) of ``<entry>/SKILL.md`` for each. A call takes the fingerprint again and
re-discovers on any difference.

Cheap validation: a directory's list of entries changes only together with the
directory's own mtime and ctime, so a directory whose identity is unchanged since it
was listed is not listed again — its known entries' SKILL.md are ``stat``\\ ed directly.
Editing a SKILL.md in place does not touch the directory (nor does creating one inside
an existing entry), which is why every SKILL.md is still ``stat``\\ ed on every call.

Invariant (git's "racy clean" rule, as in :mod:`beamclaw_core.workspace.file_cache`): a
change is never missed. A listing is reused only when its directory had not changed for
``racy_window_ns`` (2 s) when it was listed, and discovered skills are kept only when
every SKILL.md had not changed for that long when it was ``stat``\\ ed; anything younger
is listed or parsed again on every call until it settles. A hit costs one ``stat`` per
directory and per SKILL.md, no read and no :mod:`pathlib` work.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from beamclaw_core.skills.discovery import (
    agent_skills_dir,
    bundled_skills_dir,
    discover_skills,
    global_skills_dir,
)
from beamclaw_core.skills.model import Skill
from beamclaw_core.skills.parser import SKILL_FILE
from beamclaw_core.workspace.file_cache import (
    RACY_WINDOW_NS,
    CacheMiss,
    settled,
    stat_identity,
)
from beamclaw_core.workspace.layout import agent_dir

_Identity = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class _Listing:
    """One skills directory as listed: its identity and its entries' SKILL.md paths."""

    identity: _Identity | None
    """None when the directory was absent (or not stat-able)."""
    skill_files: tuple[str, ...]
    trusted: bool
    """The directory had settled when listed: an equal identity means the same entries."""


@dataclass(frozen=True, slots=True)
class SkillSources:
    """The skills directories (bundled, global, per-agent) and their SKILL.md paths."""

    directories: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Entry:
    listings: tuple[_Listing, ...]
    files: tuple[_Identity | None, ...]
    """Identities of every ``skill_files`` path, in order."""
    skills: tuple[Skill, ...]


def _list(directory: str, identity: _Identity | None, now_ns: int, window: int) -> _Listing:
    try:
        names = sorted(entry.name for entry in os.scandir(directory))
    except OSError:  # absent or not a directory: nothing to discover there
        names = []
    paths = tuple(os.path.join(directory, name, SKILL_FILE) for name in names)
    return _Listing(identity, paths, settled(identity, now_ns, window))


class SkillCatalog:
    """The skills each agent sees (bundled → global → per-agent, as
    :func:`discover_skills`), parsed again only when a SKILL.md or a skills directory
    changed. An unchanged result is the same tuple object (so later caches can key on it).

    ``clock`` is the wall clock in nanoseconds that file timestamps are compared with
    (tests may pass one that runs ahead, so that files written just now count as settled).
    Thread-safe: entries are immutable and swapped whole.
    """

    MAX_AGENTS = 256

    def __init__(
        self, racy_window_ns: int = RACY_WINDOW_NS, *, clock: Callable[[], int] = time.time_ns
    ) -> None:
        self.racy_window_ns = racy_window_ns
        self.clock = clock
        self._directories: dict[tuple[object, ...], tuple[str, str, str]] = {}
        self._entries: dict[tuple[str, str, str], _Entry] = {}

    def _dirs(self, agent_id: str, home: Path | None) -> tuple[str, str, str]:
        if home is not None:
            key: tuple[object, ...] = (agent_id, home)
        else:  # $BEAMCLAW_HOME, or ~/.beamclaw: both read at call time, like beamclaw_home()
            key = (agent_id, None, os.environ.get("BEAMCLAW_HOME"), os.environ.get("HOME"))
        dirs = self._directories.get(key)
        if dirs is None:
            agent_dir(agent_id, home)  # validates the name before any path is built from it
            dirs = (
                str(bundled_skills_dir()),
                str(global_skills_dir(home)),
                str(agent_skills_dir(agent_id, home)),
            )
            if len(self._directories) >= self.MAX_AGENTS:
                self._directories.clear()
            self._directories[key] = dirs
        return dirs

    def skills(
        self, agent_id: str, home: Path | None = None, *, cached_only: bool = False
    ) -> tuple[Skill, ...]:
        """The skills of ``agent_id`` (sorted by name), from the cache when unchanged.

        Raises:
            InvalidAgentNameError: ``agent_id`` cannot safely name a directory.
            CacheMiss: with ``cached_only``, when a SKILL.md would have to be parsed.
        """
        dirs = self._dirs(agent_id, home)
        entry = self._entries.get(dirs)
        now_ns: int | None = None
        listings: list[_Listing] = []
        for index, directory in enumerate(dirs):
            identity = stat_identity(directory)
            known = entry.listings[index] if entry is not None else None
            if known is not None and known.trusted and known.identity == identity:
                listings.append(known)
                continue
            if now_ns is None:
                now_ns = self.clock()
            listings.append(_list(directory, identity, now_ns, self.racy_window_ns))
        files = tuple(stat_identity(p) for listing in listings for p in listing.skill_files)
        if entry is not None and files == entry.files and _same_files(listings, entry.listings):
            if any(a is not b for a, b in zip(listings, entry.listings, strict=True)):
                self._entries[dirs] = _Entry(tuple(listings), files, entry.skills)
            return entry.skills
        if cached_only:
            raise CacheMiss(dirs[2])
        if now_ns is None:
            now_ns = self.clock()
        skills = discover_skills(agent_id, home=home).skills  # read after the stats above
        if all(settled(f, now_ns, self.racy_window_ns) for f in files):
            if len(self._entries) >= self.MAX_AGENTS:
                self._entries.clear()
            self._entries[dirs] = _Entry(tuple(listings), files, skills)
        return skills

    def sources(self, agent_id: str, home: Path | None = None) -> SkillSources | None:
        """Where the skills :meth:`skills` holds for ``agent_id`` were found and read
        (None: it holds none): what a change watch of them must see."""
        dirs = self._dirs(agent_id, home)
        entry = self._entries.get(dirs)
        if entry is None:
            return None
        files = tuple(path for listing in entry.listings for path in listing.skill_files)
        return SkillSources(dirs, files)

    def clear(self) -> None:
        """Forget every agent's skills."""
        self._directories.clear()
        self._entries.clear()


def _same_files(a: list[_Listing], b: tuple[_Listing, ...]) -> bool:
    return all(x is y or x.skill_files == y.skill_files for x, y in zip(a, b, strict=True))
