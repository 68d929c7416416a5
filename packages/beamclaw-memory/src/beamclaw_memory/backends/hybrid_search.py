"""Memory search over an agent's live index: keyword candidates (BM25), vector
candidates (embeddings), then :func:`~beamclaw_memory.search.ranking.rank` fuses them.

Invariants:

* :meth:`HybridSearch.search` never raises. Whatever fails (empty query, the embedding
  endpoint erroring or timing out, vectors of the wrong dimension, even the database)
  the caller gets a :class:`SearchResult` whose ``mode`` says what was actually used and
  whose ``degraded_reason`` says why; failures also emit ``memory_degraded``.
* The vector side embeds the rows still missing a vector (and stores those vectors)
  before it embeds the query; vectors of another dimension are dropped from the index
  and re-embedded at the next search.
* Building this object loads no numpy or bm25s: the index and ranking modules (and with
  them numpy, and the stopword lists of bm25s) are imported by the first search.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from beamclaw_memory.backends.agent_ids import check_agent
from beamclaw_memory.backends.embedding_gate import EmbeddingGate
from beamclaw_memory.backends.live_index import LiveIndexes
from beamclaw_memory.errors import EmbeddingDimensionError, EmbeddingError
from beamclaw_memory.search.tokenizer import Tokenizer
from beamclaw_memory.service import MemoryCategory, SearchMode, SearchResult, SeenTranscript
from beamclaw_memory.settings import SearchSettings
from beamclaw_obs import EventType, emit

if TYPE_CHECKING:
    import numpy as np

    from beamclaw_memory.search.index import AgentIndex

NO_PROVIDER = "no embedding provider configured"


class VectorCandidates:
    """The semantic retriever: the query's nearest rows above ``min_similarity``."""

    def __init__(self, gate: EmbeddingGate, indexes: LiveIndexes, settings: SearchSettings) -> None:
        self._gate = gate
        self._indexes = indexes
        self._settings = settings

    async def top(
        self, agent_id: str, index: AgentIndex, query: str, k: int, mask: np.ndarray | None
    ) -> list[tuple[int, float]]:
        """``(slot, similarity)`` best first. Raises :class:`EmbeddingError`."""
        model = self._gate.model
        assert model is not None
        await self._embed_missing(agent_id, index, model)
        (query_vector,) = await self._gate.embed([query])
        floor = self._settings.min_similarity
        try:
            return [p for p in index.vectors.top(query_vector, k, mask) if p[1] >= floor]
        except ValueError as exc:
            expected = index.vectors.dimensions or 0
            # stored vectors came from another model or size: re-embed them next search
            index.reset_vectors(model)
            raise EmbeddingDimensionError(model, expected, int(query_vector.shape[0])) from exc

    async def _embed_missing(self, agent_id: str, index: AgentIndex, model: str) -> None:
        missing = index.missing_vectors()
        if not missing:
            return
        vectors = await self._gate.embed([index.text(s) for s in missing])
        items: list[tuple[str, np.ndarray, str]] = []
        for slot, vector in zip(missing, vectors, strict=True):
            if not index.set_vector(slot, vector):
                expected = index.vectors.dimensions or 0
                index.reset_vectors(model)
                raise EmbeddingDimensionError(model, expected, int(vector.shape[0]))
            items.append((index.key(slot), vector, model))
        changed = await self._indexes.rows.set_embeddings(agent_id, items)
        self._indexes.noted(agent_id, index, changed)


class HybridSearch:
    """Ranked hits from an agent's :class:`LiveIndexes` (see the module invariants)."""

    def __init__(
        self,
        indexes: LiveIndexes,
        gate: EmbeddingGate,
        settings: SearchSettings,
        tokenizer: Tokenizer,
        clock: Callable[[], float],
    ) -> None:
        self._indexes = indexes
        self._gate = gate
        self._settings = settings
        self._tokenizer = tokenizer
        self._clock = clock
        self._vectors = VectorCandidates(gate, indexes, settings)

    async def search(
        self,
        agent_id: str,
        query: str,
        mode: SearchMode,
        limit: int,
        category: MemoryCategory | None,
        seen: SeenTranscript | None = None,
    ) -> SearchResult:
        """Never raises; emits ``memory_search`` (and ``memory_degraded`` on failure)."""
        started = time.monotonic()
        try:
            result = await self._search(agent_id, query, SearchMode(mode), limit, category, seen)
        except Exception as exc:  # search must never raise into the agent
            reason = f"memory search failed: {type(exc).__name__}: {exc}"
            emit(EventType.MEMORY_DEGRADED, agent_id=agent_id, reason=reason)
            result = SearchResult(hits=(), mode=SearchMode.KEYWORD, degraded_reason=reason)
        emit(
            EventType.MEMORY_SEARCH,
            agent_id=agent_id,
            mode=str(mode),
            used=str(result.mode),
            hits=len(result.hits),
            degraded=result.degraded_reason is not None,
            duration_ms=round((time.monotonic() - started) * 1000, 2),
        )
        return result

    async def _search(
        self,
        agent_id: str,
        query: str,
        mode: SearchMode,
        limit: int,
        category: MemoryCategory | None,
        seen: SeenTranscript | None,
    ) -> SearchResult:
        from beamclaw_memory.search.ranking import rank  # numpy: with the first search

        query = query.strip()[: self._settings.max_query_chars]
        if not query:
            return SearchResult(hits=(), mode=SearchMode.KEYWORD, degraded_reason="empty query")
        check_agent(agent_id)
        limit = max(1, min(limit, 100))
        candidates = limit * self._settings.candidate_multiplier
        index = await self._indexes.synced(agent_id)
        mask = index.mask(category, seen)
        tokens = self._tokenizer(query)
        keyword = index.bm25.top(tokens, candidates, mask) if tokens else []
        vector: list[tuple[int, float]] = []
        used, degraded = mode, None
        if mode is not SearchMode.KEYWORD:
            if self._gate.embedder is None:
                used, degraded = SearchMode.KEYWORD, NO_PROVIDER
            else:
                try:
                    vector = await self._vectors.top(agent_id, index, query, candidates, mask)
                except EmbeddingError as exc:
                    used, degraded = SearchMode.KEYWORD, exc.reason
                    emit(
                        EventType.MEMORY_DEGRADED,
                        agent_id=agent_id,
                        model=exc.model,
                        reason=exc.reason,
                    )
        ranked = rank(index, used, keyword, vector, self._settings, now=self._clock(), limit=limit)
        hits = tuple(index.hit(slot, score) for slot, score in ranked)
        return SearchResult(hits=hits, mode=used, degraded_reason=degraded)
