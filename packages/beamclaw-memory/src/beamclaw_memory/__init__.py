"""beamclaw-memory: the shared database, migrations and the agent's searchable memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_memory.backends import IndexedMemory, InMemoryRowStore, RowStore, SqlRowStore
    from beamclaw_memory.embeddings import (
        CachingEmbedder,
        Embedder,
        EmbeddingCache,
        OpenAIEmbedder,
    )
    from beamclaw_memory.errors import (
        BeamclawMemoryError,
        DatabaseUnavailableError,
        EmbeddingDimensionError,
        EmbeddingError,
        EmbeddingResponseError,
        EmbeddingUnavailableError,
        InvalidMemoryInputError,
        MigrationError,
        NestedUnitError,
        StorageError,
        StorageUnavailableError,
        UnitClosedError,
        UnitOfWorkError,
    )
    from beamclaw_memory.evaluation import EvalSet, load_into, recall_at_k
    from beamclaw_memory.factory import create_memory_service
    from beamclaw_memory.indexing.sources import transcript_position
    from beamclaw_memory.indexing.watch import ChangeWatch
    from beamclaw_memory.prepared import Prepared
    from beamclaw_memory.service import (
        IndexReport,
        MemoryCategory,
        MemoryEntry,
        MemoryService,
        SearchHit,
        SearchMode,
        SearchResult,
        SeenTranscript,
        TranscriptMessage,
    )
    from beamclaw_memory.settings import (
        ChunkingSettings,
        EmbeddingSettings,
        MemorySettings,
        MmrSettings,
        SearchSettings,
        TemporalDecaySettings,
    )
    from beamclaw_memory.storage import (
        DATABASE_URL_ENV,
        Database,
        expected_heads,
        masked,
        migration_locations,
        normalise_url,
        resolve_database_url,
    )
    from beamclaw_memory.unit import Unit
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_memory.backends": (
                "IndexedMemory",
                "InMemoryRowStore",
                "RowStore",
                "SqlRowStore",
            ),
            "beamclaw_memory.embeddings": (
                "CachingEmbedder",
                "Embedder",
                "EmbeddingCache",
                "OpenAIEmbedder",
            ),
            "beamclaw_memory.indexing.sources": ("transcript_position",),
            "beamclaw_memory.indexing.watch": ("ChangeWatch",),
            "beamclaw_memory.errors": (
                "BeamclawMemoryError",
                "DatabaseUnavailableError",
                "EmbeddingDimensionError",
                "EmbeddingError",
                "EmbeddingResponseError",
                "EmbeddingUnavailableError",
                "InvalidMemoryInputError",
                "MigrationError",
                "NestedUnitError",
                "StorageError",
                "StorageUnavailableError",
                "UnitClosedError",
                "UnitOfWorkError",
            ),
            "beamclaw_memory.evaluation": ("EvalSet", "load_into", "recall_at_k"),
            "beamclaw_memory.factory": ("create_memory_service",),
            "beamclaw_memory.prepared": ("Prepared",),
            "beamclaw_memory.service": (
                "IndexReport",
                "MemoryCategory",
                "MemoryEntry",
                "MemoryService",
                "SearchHit",
                "SearchMode",
                "SearchResult",
                "SeenTranscript",
                "TranscriptMessage",
            ),
            "beamclaw_memory.settings": (
                "ChunkingSettings",
                "EmbeddingSettings",
                "MemorySettings",
                "MmrSettings",
                "SearchSettings",
                "TemporalDecaySettings",
            ),
            "beamclaw_memory.storage": (
                "DATABASE_URL_ENV",
                "Database",
                "expected_heads",
                "masked",
                "migration_locations",
                "normalise_url",
                "resolve_database_url",
            ),
            "beamclaw_memory.unit": ("Unit",),
        },
    )

__version__ = "0.1.0"
__all__ = [
    "DATABASE_URL_ENV",
    "BeamclawMemoryError",
    "CachingEmbedder",
    "ChangeWatch",
    "ChunkingSettings",
    "Database",
    "DatabaseUnavailableError",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingDimensionError",
    "EmbeddingError",
    "EmbeddingResponseError",
    "EmbeddingSettings",
    "EmbeddingUnavailableError",
    "EvalSet",
    "InMemoryRowStore",
    "IndexReport",
    "IndexedMemory",
    "InvalidMemoryInputError",
    "MemoryCategory",
    "MemoryEntry",
    "MemoryService",
    "MemorySettings",
    "MigrationError",
    "MmrSettings",
    "NestedUnitError",
    "OpenAIEmbedder",
    "Prepared",
    "RowStore",
    "SearchHit",
    "SearchMode",
    "SearchResult",
    "SearchSettings",
    "SeenTranscript",
    "SqlRowStore",
    "StorageError",
    "StorageUnavailableError",
    "TemporalDecaySettings",
    "TranscriptMessage",
    "Unit",
    "UnitClosedError",
    "UnitOfWorkError",
    "__version__",
    "create_memory_service",
    "expected_heads",
    "load_into",
    "masked",
    "migration_locations",
    "normalise_url",
    "recall_at_k",
    "resolve_database_url",
    "transcript_position",
]
