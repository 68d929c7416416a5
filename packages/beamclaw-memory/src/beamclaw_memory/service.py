"""The memory service protocol (seed 001 ``bc_memory``) the agent's tools and loop use.

Scoped per agent. ``search`` never raises to the agent: when embeddings are unavailable
it degrades to keyword search and says so in ``SearchResult.degraded_reason``.
"""

from __future__ import annotations

import enum
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


@runtime_checkable
class MemoryService(Protocol):
    """Per-agent memory: entries plus indexed workspace files and transcripts."""

    async def store(
        self, agent_id: str, key: str, value: str, category: MemoryCategory,
        source: str | None = None,
    ) -> MemoryEntry: ...

    async def get(self, agent_id: str, key: str) -> MemoryEntry | None: ...

    async def forget(self, agent_id: str, key: str) -> bool: ...

    async def recall(
        self, agent_id: str, query: str, limit: int = 5,
        category: MemoryCategory | None = None,
    ) -> list[MemoryEntry]: ...

    async def search(
        self, agent_id: str, query: str, *, mode: SearchMode = SearchMode.HYBRID,
        limit: int = 5, category: MemoryCategory | None = None,
    ) -> SearchResult: ...
