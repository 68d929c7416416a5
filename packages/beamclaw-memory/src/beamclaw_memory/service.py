"""The memory service protocol (seed 001 ``bc_memory``) the agent's tools and loop use.

Scoped per agent. ``search`` never raises to the agent: when embeddings are unavailable
it degrades to keyword search and says so in ``SearchResult.degraded_reason``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

FILE_SOURCE_PREFIX = "file:"
"""Source of a workspace file's chunks: ``file:MEMORY.md``, ``file:memory/2026-03-04.md``."""


class MemoryCategory(enum.StrEnum):
    CORE = "core"
    DAILY = "daily"
    CONVERSATION = "conversation"
    CUSTOM = "custom"


class SearchMode(enum.StrEnum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


@dataclass(frozen=True, slots=True)
class SeenTranscript:
    """What a search leaves out: the transcript chunks of ``session_id``'s messages from
    ``from_seq`` on (the messages its model reads verbatim already, see
    :func:`~beamclaw_memory.transcript_position`). Left out before ranking, so they never
    take the place of a hit the model has not seen."""

    session_id: str
    from_seq: int


class MemoryEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    value: str
    category: MemoryCategory
    created_at: float
    updated_at: float
    source: str | None = None


class SearchHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    text: str
    score: float
    category: MemoryCategory
    source: str | None = None
    """Where the text came from: ``file:<path in the workspace>``, ``session:<id>`` or the
    source given to ``store``."""
    updated_at: float | None = None
    lines: tuple[int, int] | None = None
    """First and last line (1-based, inclusive) of the text in its file (file chunks only)."""

    @property
    def origin(self) -> str:
        """Where the hit came from, for people and models: ``MEMORY.md lines 3-5``,
        ``memory/2026-03-04.md line 2``, ``session:<id>`` (else its key)."""
        if self.source is None:
            return self.key
        if not self.source.startswith(FILE_SOURCE_PREFIX):
            return self.source
        name = self.source.removeprefix(FILE_SOURCE_PREFIX)
        if self.lines is None:
            return name
        first, last = self.lines
        return f"{name} line {first}" if first == last else f"{name} lines {first}-{last}"


class SearchResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    hits: tuple[SearchHit, ...]
    mode: SearchMode
    """The mode actually used (may be KEYWORD after a fallback)."""
    degraded_reason: str | None = None


class TranscriptMessage(BaseModel):
    """One message of a session transcript, as core feeds it to the indexer."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    seq: int
    role: str
    text: str


class IndexReport(BaseModel):
    """What one indexing pass did (or, summed with :meth:`plus`, several passes)."""

    model_config = ConfigDict(frozen=True)

    passes: int = 1
    sources_seen: int = 0
    sources_changed: int = 0
    sources_unchanged: int = 0
    sources_removed: int = 0
    chunks_written: int = 0
    chunks_removed: int = 0
    chunks_embedded: int = 0
    embedding_error: str | None = None
    """Why chunks were indexed without vectors (they are embedded at a later search)."""
    skipped: tuple[str, ...] = ()
    """Sources not (fully) indexed, with the reason."""

    def plus(self, other: IndexReport) -> IndexReport:
        """The counts of both reports added (the latest embedding error, no skip list)."""
        return IndexReport(
            passes=self.passes + other.passes,
            sources_seen=self.sources_seen + other.sources_seen,
            sources_changed=self.sources_changed + other.sources_changed,
            sources_unchanged=self.sources_unchanged + other.sources_unchanged,
            sources_removed=self.sources_removed + other.sources_removed,
            chunks_written=self.chunks_written + other.chunks_written,
            chunks_removed=self.chunks_removed + other.chunks_removed,
            chunks_embedded=self.chunks_embedded + other.chunks_embedded,
            embedding_error=other.embedding_error or self.embedding_error,
        )


@runtime_checkable
class MemoryService(Protocol):
    """Per-agent memory: entries plus indexed workspace files and transcripts."""

    async def store(
        self,
        agent_id: str,
        key: str,
        value: str,
        category: MemoryCategory,
        source: str | None = None,
    ) -> MemoryEntry: ...

    async def get(self, agent_id: str, key: str) -> MemoryEntry | None: ...

    async def forget(self, agent_id: str, key: str) -> bool: ...

    async def recall(
        self,
        agent_id: str,
        query: str,
        limit: int = 5,
        category: MemoryCategory | None = None,
    ) -> list[MemoryEntry]: ...

    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        mode: SearchMode = SearchMode.HYBRID,
        limit: int = 5,
        category: MemoryCategory | None = None,
        seen: SeenTranscript | None = None,
    ) -> SearchResult: ...

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> IndexReport:
        """Index MEMORY.md, daily logs and bootstrap files; unchanged files cost nothing.

        ``workspace`` defaults to ``$BEAMCLAW_HOME/agents/<agent_id>``. A changed file
        replaces its own chunks; a deleted file's chunks are removed. Raises
        :class:`~beamclaw_memory.BeamclawMemoryError` (``StorageError`` when the store
        fails) or ``OSError``, nothing else.
        """
        ...

    async def index_transcript(
        self,
        agent_id: str,
        messages: Iterable[TranscriptMessage | tuple[str, int, str, str]],
    ) -> IndexReport:
        """Index ``(session_id, seq, role, text)`` messages (category ``conversation``)."""
        ...

    async def aclose(self) -> None:
        """Release HTTP clients; the shared database is closed by its owner."""
        ...
