"""What gets indexed from an agent's workspace and transcripts, as pure functions.

Workspace layout (``$BEAMCLAW_HOME/agents/<agent_id>/``): ``MEMORY.md`` (long-term memory,
category ``core``), ``memory/YYYY-MM-DD.md`` daily logs (``daily``, dated by their name) and
the bootstrap files (``core``). Markdown is split into heading sections, then each section
into word-boundary chunks.

Chunk keys are derived from content (``@file/<path>#<sha12>``), not position: inserting a
paragraph adds one key and leaves every other chunk's key, row and embedding alone.
"""

from __future__ import annotations

import calendar
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from beamclaw_memory.search.chunker import chunk_text, split_sections
from beamclaw_memory.service import MemoryCategory, TranscriptMessage

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
FILE_SOURCE_PREFIX = "file:"
SESSION_SOURCE_PREFIX = "session:"
INDEXER_KEY_PREFIX = "@"
_DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")


def content_hash(text: str) -> str:
    """Hex sha256 of the UTF-8 text: the change detector of rows and sources."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """A file the indexer reads: its source name, path, category and date (daily logs)."""

    source: str
    path: Path
    relpath: str
    category: MemoryCategory
    dated: float | None = None


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
    """The indexable files present in ``workspace`` (symlinks leaving it are skipped)."""
    found: list[WorkspaceFile] = []
    root = workspace.resolve()

    def add(path: Path, category: MemoryCategory, dated: float | None = None) -> None:
        try:
            resolved = path.resolve()
        except OSError:
            return
        if not resolved.is_file() or not resolved.is_relative_to(root):
            return
        rel = path.relative_to(workspace).as_posix()
        found.append(WorkspaceFile(FILE_SOURCE_PREFIX + rel, path, rel, category, dated))

    add(workspace / MEMORY_FILE, MemoryCategory.CORE)
    for name in BOOTSTRAP_FILES:
        add(workspace / name, MemoryCategory.CORE)
    daily = workspace / DAILY_DIR
    if daily.is_dir():
        for path in sorted(daily.iterdir()):
            stamp = _daily_timestamp(path.name)
            if stamp is not None:
                add(path, MemoryCategory.DAILY, stamp)
    return found


def markdown_chunks(text: str, size: int, overlap: int) -> list[str]:
    """Heading sections of ``text``, each cut into word-boundary chunks."""
    chunks: list[str] = []
    for section in split_sections(text):
        pieces = chunk_text(section.text, size, overlap)
        for i, piece in enumerate(pieces):
            # later pieces of a long section keep their heading as context
            if i > 0 and section.heading and not piece.startswith("#"):
                piece = f"[{section.heading}] {piece}"
            chunks.append(piece)
    return chunks


def keyed_chunks(prefix: str, chunks: Iterable[str]) -> list[tuple[str, str]]:
    """``(key, text)`` pairs with content-derived keys; repeats get ``~2``, ``~3`` …"""
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for text in chunks:
        digest = content_hash(text)[:12]
        n = seen.get(digest, 0) + 1
        seen[digest] = n
        out.append((f"{prefix}#{digest}" + (f"~{n}" if n > 1 else ""), text))
    return out


def as_message(item: TranscriptMessage | tuple[str, int, str, str]) -> TranscriptMessage:
    """Accept ``(session_id, seq, role, text)`` tuples as well as models."""
    if isinstance(item, TranscriptMessage):
        return item
    session_id, seq, role, text = item
    return TranscriptMessage(session_id=session_id, seq=seq, role=role, text=text)


def message_chunks(message: TranscriptMessage, size: int, overlap: int) -> list[tuple[str, str]]:
    """``(key, text)`` chunks of one message; keys are positional (messages never move)."""
    pieces = chunk_text(f"{message.role}: {message.text}", size, overlap)
    base = f"{INDEXER_KEY_PREFIX}session/{message.session_id}/{message.seq}"
    return [(f"{base}#{i}", piece) for i, piece in enumerate(pieces)]
