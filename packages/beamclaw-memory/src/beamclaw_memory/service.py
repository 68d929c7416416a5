"""The memory service protocol (seed 001 ``bc_memory``) the agent's tools and loop use.

Scoped per agent. ``search`` never raises to the agent: when embeddings are unavailable
it degrades to keyword search and says so in ``SearchResult.degraded_reason``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict


class MemoryCategory(enum.StrEnum):
    CORE = "core"
    DAILY = "daily"
    CONVERSATION = "conversation"
    CUSTOM = "custom"


class SearchMode(enum.StrEnum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


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
    updated_at: float | None = None


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
    """What one indexing pass did."""

    model_config = ConfigDict(frozen=True)

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
    ) -> SearchResult: ...

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> IndexReport:
        """Index MEMORY.md, daily logs and bootstrap files; unchanged files cost nothing.

        ``workspace`` defaults to ``$BEAMCLAW_HOME/agents/<agent_id>``.
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
