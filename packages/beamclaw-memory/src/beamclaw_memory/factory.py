"""Build the memory service the configuration asks for (the composition root calls this)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from beamclaw_memory.backends.indexed import IndexedMemory
from beamclaw_memory.backends.rows import InMemoryRowStore, RowStore
from beamclaw_memory.backends.sql import SqlRowStore
from beamclaw_memory.embeddings.cache import EmbeddingCache
from beamclaw_memory.embeddings.caching import CachingEmbedder
from beamclaw_memory.embeddings.client import Embedder, OpenAIEmbedder
from beamclaw_memory.errors import BeamclawMemoryError
from beamclaw_memory.settings import MemorySettings
from beamclaw_memory.storage import Database


def create_memory_service(
    settings: MemorySettings,
    database: Database | None,
    *,
    embedder: Embedder | None = None,
    clock: Callable[[], float] = time.time,
    home: Path | None = None,
) -> IndexedMemory:
    """The ``[memory] backend`` service with its embedder and embedding cache.

    Args:
        settings: the ``[memory]`` section.
        database: the shared, migrated database; required for ``backend = "sql"``. With
            ``backend = "memory"`` it (when given) still persists the embedding cache.
        embedder: overrides the one ``[memory.embeddings]`` describes (tests pass
            :class:`beamclaw_memory.testing.HashingEmbedder`). When neither is given,
            search is keyword-only.
        clock: wall-clock source (tests move time forward).
        home: ``BEAMCLAW_HOME`` override for workspace paths.
    """
    rows: RowStore
    if settings.backend == "sql":
        if database is None:
            raise BeamclawMemoryError('[memory] backend = "sql" needs the shared database')
        rows = SqlRowStore(database)
    else:
        rows = InMemoryRowStore()
    inner = embedder
    if inner is None and settings.embeddings.configured:
        inner = OpenAIEmbedder(settings.embeddings)
    wrapped: Embedder | None = None
    if inner is not None:
        cache = EmbeddingCache(
            database, ttl_seconds=settings.embeddings.cache_ttl_seconds, clock=clock
        )
        wrapped = CachingEmbedder(inner, cache)
    return IndexedMemory(rows, settings, embedder=wrapped, clock=clock, home=home)
