"""The memory service: rows in a :class:`RowStore`, searched through per-agent indexes.

:class:`IndexedMemory` is a facade over four collaborators, one concept each:

* :class:`~beamclaw_memory.backends.live_index.LiveIndexes` — each agent's in-process
  index (BM25 postings and vectors), reconciled with the row store before every search
  (so rows written by another process on the same database are found) and updated by
  every write and delete;
* :class:`~beamclaw_memory.backends.hybrid_search.HybridSearch` — keyword and vector
  candidates fused and ranked; ``search`` never raises (``mode`` says what was used,
  ``degraded_reason`` why not what was asked);
* :class:`~beamclaw_memory.backends.source_indexer.SourceIndexer` — workspace files and
  transcripts as chunk rows, one pass per agent at a time, ``index_totals`` summing them;
* :class:`~beamclaw_memory.backends.embedding_gate.EmbeddingGate` — after the embedding
  endpoint fails, searches use keyword ranking without calling it for
  ``failure_cooldown_seconds``; rows stored meanwhile are embedded at a later search.

The facade itself validates and stores single facts and answers ``get``/``recall``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from beamclaw_memory.backends.agent_ids import check_agent
from beamclaw_memory.backends.embedding_gate import EmbeddingGate
from beamclaw_memory.backends.hybrid_search import HybridSearch
from beamclaw_memory.backends.live_index import LiveIndexes
from beamclaw_memory.backends.rows import MemoryRow, RowStore
from beamclaw_memory.backends.source_indexer import SourceIndexer
from beamclaw_memory.embeddings.client import Embedder
from beamclaw_memory.errors import InvalidMemoryInputError
from beamclaw_memory.indexing.sources import INDEXER_KEY_PREFIX, content_hash
from beamclaw_memory.indexing.watch import ChangeWatch
from beamclaw_memory.search.tokenizer import Tokenizer
from beamclaw_memory.service import (
    IndexReport,
    MemoryCategory,
    MemoryEntry,
    SearchMode,
    SearchResult,
    SeenTranscript,
    TranscriptMessage,
)
from beamclaw_memory.settings import MemorySettings
from beamclaw_obs import beamclaw_home

_HOME_VARIABLES = ("BEAMCLAW_HOME", "HOME")
"""The environment :func:`~beamclaw_obs.beamclaw_home` derives the home from."""


def _entry(row: MemoryRow) -> MemoryEntry:
    return MemoryEntry(
        key=row.key,
        value=row.value,
        category=row.category,
        created_at=row.created_at,
        updated_at=row.updated_at,
        source=row.source,
    )


class IndexedMemory:
    """:class:`~beamclaw_memory.MemoryService` over any :class:`RowStore`."""

    def __init__(
        self,
        rows: RowStore,
        settings: MemorySettings | None = None,
        *,
        embedder: Embedder | None = None,
        clock: Callable[[], float] = time.time,
        home: Path | None = None,
        watch: ChangeWatch | None = None,
    ) -> None:
        """``watch``: how workspace passes learn that nothing changed (the default
        :class:`ChangeWatch` uses inotify where it can)."""
        self.rows = rows
        self.settings = settings or MemorySettings()
        self.embedder = embedder
        self._clock = clock
        self._home = home
        self._workspaces: dict[tuple[str, str | None, str | None], Path] = {}
        tokenizer = Tokenizer(self.settings.search.stopwords)
        self._gate = EmbeddingGate(
            embedder,
            cooldown_seconds=self.settings.embeddings.failure_cooldown_seconds,
            clock=clock,
        )
        self._indexes = LiveIndexes(
            rows,
            tokenizer,
            self._gate.model,
            recheck_seconds=self.settings.search.store_check_ms / 1000,
        )
        self._search = HybridSearch(
            self._indexes, self._gate, self.settings.search, tokenizer, clock
        )
        self._indexer = SourceIndexer(
            self._indexes, self._gate, self.settings.chunking, clock, watch
        )

    @property
    def workspace_watch(self) -> ChangeWatch:
        """The change watch that lets a workspace pass skip its scan."""
        return self._indexer.watch

    @property
    def index_totals(self) -> IndexReport:
        """Every workspace indexing pass of this service, summed."""
        return self._indexer.totals

    # ------------------------------------------------------------------ entries
    async def store(
        self,
        agent_id: str,
        key: str,
        value: str,
        category: MemoryCategory,
        source: str | None = None,
    ) -> MemoryEntry:
        """Store (or replace) a fact. Raises :class:`InvalidMemoryInputError` on bad input."""
        check_agent(agent_id)
        key = key.strip()
        if not key or len(key) > 512:
            raise InvalidMemoryInputError("key", "a key is 1 to 512 characters")
        if key.startswith(INDEXER_KEY_PREFIX):
            raise InvalidMemoryInputError("key", "keys starting with '@' belong to the indexer")
        if not value.strip():
            raise InvalidMemoryInputError("value", "the value is empty")
        if len(value) > self.settings.max_value_chars:
            raise InvalidMemoryInputError(
                "value",
                f"{len(value)} characters is more than the {self.settings.max_value_chars} "
                "allowed; store a summary or write it to a workspace file",
            )
        category = MemoryCategory(category)
        existing = await self.rows.get(agent_id, key)
        digest = content_hash(value)
        if (
            existing is not None
            and existing.content_hash == digest
            and existing.category == category
            and existing.source == source
        ):
            return _entry(existing)
        now = self._clock()
        vectors, _ = await self._gate.try_embed([value])
        row = MemoryRow(
            key=key,
            value=value,
            category=category,
            source=source,
            content_hash=digest,
            created_at=existing.created_at if existing is not None else now,
            updated_at=now,
            embedding=vectors[0] if vectors else None,
            embedding_model=self._gate.model if vectors else None,
        )
        await self._indexes.write(agent_id, [row])
        return _entry(row)

    async def get(self, agent_id: str, key: str) -> MemoryEntry | None:
        row = await self.rows.get(agent_id, key)
        return _entry(row) if row is not None else None

    async def forget(self, agent_id: str, key: str) -> bool:
        return await self._indexes.delete(agent_id, [key]) > 0

    async def recall(
        self,
        agent_id: str,
        query: str,
        limit: int = 5,
        category: MemoryCategory | None = None,
    ) -> list[MemoryEntry]:
        """Entries matching ``query`` by keyword (the most recent ones for an empty query)."""
        limit = max(1, min(limit, 100))
        if not query.strip():
            return [_entry(r) for r in await self.rows.recent(agent_id, limit, category)]
        result = await self.search(
            agent_id, query, mode=SearchMode.KEYWORD, limit=limit, category=category
        )
        by_key = {r.key: r for r in await self.rows.fetch(agent_id, [h.key for h in result.hits])}
        return [_entry(by_key[h.key]) for h in result.hits if h.key in by_key]

    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        mode: SearchMode = SearchMode.HYBRID,
        limit: int = 5,
        category: MemoryCategory | None = None,
        seen: SeenTranscript | None = None,
    ) -> SearchResult:
        """Ranked hits for ``query``, ``seen``'s chunks left out. Never raises (see
        :mod:`.hybrid_search`)."""
        return await self._search.search(agent_id, query, mode, limit, category, seen)

    # ------------------------------------------------------------------ indexing
    def workspace_of(self, agent_id: str) -> Path:
        """``$BEAMCLAW_HOME/agents/<agent_id>`` (the ``home`` given, else
        :func:`~beamclaw_obs.beamclaw_home`, which reads ``$BEAMCLAW_HOME`` and, for
        ``~``, ``$HOME``: the path is remembered per agent and the values of those two,
        as every search's workspace pass asks for it)."""
        key = (agent_id, os.environ.get(_HOME_VARIABLES[0]), os.environ.get(_HOME_VARIABLES[1]))
        path = self._workspaces.get(key)
        if path is None:
            check_agent(agent_id)
            path = self._workspaces[key] = (self._home or beamclaw_home()) / "agents" / agent_id
        return path

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> IndexReport:
        check_agent(agent_id)
        root = workspace if workspace is not None else self.workspace_of(agent_id)
        return await self._indexer.index_workspace(agent_id, root)

    async def index_transcript(
        self,
        agent_id: str,
        messages: Iterable[TranscriptMessage | tuple[str, int, str, str]],
    ) -> IndexReport:
        return await self._indexer.index_transcript(agent_id, messages)

    async def aclose(self) -> None:
        self._indexer.watch.close()
        await self._gate.aclose()
        await self.rows.aclose()
