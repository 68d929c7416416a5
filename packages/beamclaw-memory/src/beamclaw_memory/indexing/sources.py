"""What gets indexed from an agent's workspace and transcripts, as pure functions.

Workspace layout (``$BEAMCLAW_HOME/agents/<agent_id>/``): ``MEMORY.md`` (long-term memory,
category ``core``), ``memory/YYYY-MM-DD.md`` daily logs (``daily``, dated by their name) and
the bootstrap files (``core``). Markdown is split into heading sections, then each section
into word-boundary chunks.

Chunk keys are derived from content (``@file/<path>#<sha12>``), not position: inserting a
paragraph adds one key and leaves every other chunk's key, row and embedding alone. A
chunk's line range (:func:`markdown_pieces`) is position, so it is kept beside the key,
not in it.
"""

from __future__ import annotations

import calendar
import hashlib
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from beamclaw_memory.search.chunker import chunk_text, split_sections
from beamclaw_memory.service import FILE_SOURCE_PREFIX, MemoryCategory, TranscriptMessage

BOOTSTRAP_FILES = (
    "IDENTITY.md",
    "SOUL.md",
    "USER.md",
    "TOOLS.md",
    "AGENTS.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
)
MEMORY_FILE = "MEMORY.md"
DAILY_DIR = "memory"
SESSION_SOURCE_PREFIX = "session:"
INDEXER_KEY_PREFIX = "@"
_DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")


def content_hash(text: str) -> str:
    """Hex sha256 of the UTF-8 text: the change detector of rows and sources."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """A file the indexer reads: its source name, location, category and date (daily
    logs), with its size and mtime as the scan that found it saw them."""

    source: str
    location: str
    """The file's path (a string: a scan before every search builds no ``Path``)."""
    relpath: str
    category: MemoryCategory
    dated: float | None = None
    size: int = 0
    mtime_ns: int = 0
    indirect: bool = False
    """Reached through a symbolic link, or with another hard link: it may change through
    a path outside the workspace's directories, where a
    :class:`~beamclaw_memory.indexing.watch.ChangeWatch` of them does not look."""

    @property
    def path(self) -> Path:
        return Path(self.location)


WATCHED_NAMES = frozenset({MEMORY_FILE, *BOOTSTRAP_FILES, DAILY_DIR})
"""The entries of a workspace's root that :func:`workspace_files` looks at."""


def watched_directories(workspace: Path) -> dict[str, frozenset[str] | None]:
    """The directories :func:`workspace_files` lists or looks into, with the entry names
    that matter in each (None: all): what a change watch of the workspace must watch."""
    base = os.fspath(workspace)
    return {base: WATCHED_NAMES, os.path.join(base, DAILY_DIR): None}


def _daily_timestamp(name: str) -> float | None:
    match = _DAILY_NAME.match(name)
    if match is None:
        return None
    year, month, day = (int(g) for g in match.groups())
    try:
        return float(calendar.timegm((year, month, day, 0, 0, 0, 0, 0, 0)))
    except (ValueError, OverflowError):
        return None


def workspace_files(workspace: Path) -> list[WorkspaceFile]:
    """The indexable files present in ``workspace`` (symlinks leaving it are skipped;
    none when it is not a directory), each with the size and mtime of that moment.

    Runs before every auto-context search, so it costs one ``lstat`` per candidate (and
    builds no ``Path``): a path is resolved only when it is a symlink (or lies in a
    symlinked ``memory/``), the only way a name under the workspace can lead out of it.
    """
    found: list[WorkspaceFile] = []
    base = os.fspath(workspace)
    try:
        if not stat.S_ISDIR(os.stat(base).st_mode):
            return found
    except OSError:
        return found
    root: list[str] = []  # the resolved workspace, computed for the first symlink only

    def add(
        rel: str, category: MemoryCategory, dated: float | None = None, linked: bool = False
    ) -> None:
        location = os.path.join(base, rel)
        try:
            st = os.lstat(location)
            linked = linked or stat.S_ISLNK(st.st_mode)
            if linked:
                if not root:
                    root.append(os.path.realpath(base))
                resolved = os.path.realpath(location)
                if os.path.commonpath((resolved, root[0])) != root[0]:
                    return
                st = os.stat(resolved)
                if not stat.S_ISREG(st.st_mode):
                    return
            elif not stat.S_ISREG(st.st_mode):
                return
        except (OSError, ValueError):
            return
        found.append(
            WorkspaceFile(
                FILE_SOURCE_PREFIX + rel,
                location,
                rel,
                category,
                dated,
                st.st_size,
                st.st_mtime_ns,
                linked or st.st_nlink > 1,
            )
        )

    add(MEMORY_FILE, MemoryCategory.CORE)
    for name in BOOTSTRAP_FILES:
        add(name, MemoryCategory.CORE)
    daily = os.path.join(base, DAILY_DIR)
    try:
        linked = stat.S_ISLNK(os.lstat(daily).st_mode)
        names = sorted(os.listdir(daily)) if os.path.isdir(daily) else []
    except OSError:
        names, linked = [], False
    for name in names:
        stamp = _daily_timestamp(name)
        if stamp is not None:
            add(f"{DAILY_DIR}/{name}", MemoryCategory.DAILY, stamp, linked)
    return found


Lines = tuple[int, int]
"""First and last line of a chunk in its file, 1-based and inclusive."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One chunk of a file: its text, content-derived key and line range."""

    key: str
    text: str
    lines: Lines | None


def markdown_pieces(text: str, size: int, overlap: int) -> list[tuple[str, Lines | None]]:
    """Heading sections of ``text``, each cut into word-boundary chunks, with the lines
    each chunk covers (numbered as ``str.splitlines`` counts them, as editors do).

    Chunks are exact substrings of the file (sections and chunks only strip and cut), so
    each is found after its predecessor; ``None`` only if that search fails.
    """
    flat = "\n".join(text.splitlines())
    out: list[tuple[str, Lines | None]] = []
    section_at = 0
    counted, line = 0, 1  # line number at offset ``counted``; offsets only move forward

    def line_of(offset: int) -> int:
        nonlocal counted, line
        if offset < counted:  # never for chunks found in order; correct regardless
            return flat.count("\n", 0, offset) + 1
        line += flat.count("\n", counted, offset)
        counted = offset
        return line

    for section in split_sections(text):
        found = flat.find(section.text, section_at)
        base = found if found >= 0 else None
        if found >= 0:
            section_at = found + len(section.text)
        piece_at = 0
        for i, piece in enumerate(chunk_text(section.text, size, overlap)):
            lines: Lines | None = None
            offset = section.text.find(piece, piece_at)
            if base is not None and offset >= 0:
                piece_at = offset + 1
                first = line_of(base + offset)
                lines = (first, first + piece.count("\n"))
            # later pieces of a long section keep their heading as context
            if i > 0 and section.heading and not piece.startswith("#"):
                piece = f"[{section.heading}] {piece}"
            out.append((piece, lines))
    return out


def markdown_chunks(text: str, size: int, overlap: int) -> list[str]:
    """Heading sections of ``text``, each cut into word-boundary chunks."""
    return [piece for piece, _ in markdown_pieces(text, size, overlap)]


def _content_keys(prefix: str, texts: Iterable[str]) -> list[str]:
    keys: list[str] = []
    seen: dict[str, int] = {}
    for text in texts:
        digest = content_hash(text)[:12]
        n = seen.get(digest, 0) + 1
        seen[digest] = n
        keys.append(f"{prefix}#{digest}" + (f"~{n}" if n > 1 else ""))
    return keys


def keyed_chunks(prefix: str, chunks: Iterable[str]) -> list[tuple[str, str]]:
    """``(key, text)`` pairs with content-derived keys; repeats get ``~2``, ``~3`` …"""
    texts = list(chunks)
    return list(zip(_content_keys(prefix, texts), texts, strict=True))


def file_pieces(relpath: str, text: str, size: int, overlap: int) -> list[Piece]:
    """The keyed, line-numbered chunks of the workspace file ``relpath``."""
    pieces = markdown_pieces(text, size, overlap)
    keys = _content_keys(f"{INDEXER_KEY_PREFIX}file/{relpath}", (p for p, _ in pieces))
    return [Piece(k, p, lines) for k, (p, lines) in zip(keys, pieces, strict=True)]


def as_message(item: TranscriptMessage | tuple[str, int, str, str]) -> TranscriptMessage:
    """Accept ``(session_id, seq, role, text)`` tuples as well as models."""
    if isinstance(item, TranscriptMessage):
        return item
    session_id, seq, role, text = item
    return TranscriptMessage(session_id=session_id, seq=seq, role=role, text=text)


_TRANSCRIPT_KEY_PREFIX = f"{INDEXER_KEY_PREFIX}session/"


def message_chunks(message: TranscriptMessage, size: int, overlap: int) -> list[tuple[str, str]]:
    """``(key, text)`` chunks of one message; keys are positional (messages never move):
    ``@session/<session id>/<seq>#<chunk>`` (:func:`transcript_position` reads them)."""
    pieces = chunk_text(f"{message.role}: {message.text}", size, overlap)
    base = f"{_TRANSCRIPT_KEY_PREFIX}{message.session_id}/{message.seq}"
    return [(f"{base}#{i}", piece) for i, piece in enumerate(pieces)]


def transcript_position(key: str) -> tuple[str, int] | None:
    """``(session id, seq)`` of the message a transcript chunk's key names (None for any
    other key)."""
    if not key.startswith(_TRANSCRIPT_KEY_PREFIX):
        return None
    base = key[len(_TRANSCRIPT_KEY_PREFIX) :].rpartition("#")[0]
    session_id, _, seq = base.rpartition("/")
    if not session_id or not seq.isdigit():
        return None
    return session_id, int(seq)
