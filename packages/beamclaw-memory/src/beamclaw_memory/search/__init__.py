"""Search building blocks: tokeniser, chunker, BM25, vectors, fusion and ranking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_memory.search.bm25 import BM25Index
    from beamclaw_memory.search.chunker import Section, chunk_text, paragraphs, split_sections
    from beamclaw_memory.search.fusion import (
        decay_factor,
        jaccard,
        max_normalised,
        min_max,
        mmr,
        rrf_fusion,
        weighted_fusion,
    )
    from beamclaw_memory.search.index import AgentIndex, IndexedDoc
    from beamclaw_memory.search.ranking import fuse, rank
    from beamclaw_memory.search.tokenizer import (
        STOPWORD_LANGUAGES,
        Tokenizer,
        normalise,
        stopwords_for,
        tokenize,
    )
    from beamclaw_memory.search.vectors import VectorTable, cosine, from_bytes, to_bytes
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_memory.search.bm25": ("BM25Index",),
            "beamclaw_memory.search.chunker": (
                "Section",
                "chunk_text",
                "paragraphs",
                "split_sections",
            ),
            "beamclaw_memory.search.fusion": (
                "decay_factor",
                "jaccard",
                "max_normalised",
                "min_max",
                "mmr",
                "rrf_fusion",
                "weighted_fusion",
            ),
            "beamclaw_memory.search.index": ("AgentIndex", "IndexedDoc"),
            "beamclaw_memory.search.ranking": ("fuse", "rank"),
            "beamclaw_memory.search.tokenizer": (
                "STOPWORD_LANGUAGES",
                "Tokenizer",
                "normalise",
                "stopwords_for",
                "tokenize",
            ),
            "beamclaw_memory.search.vectors": ("VectorTable", "cosine", "from_bytes", "to_bytes"),
        },
    )

__all__ = [
    "STOPWORD_LANGUAGES",
    "AgentIndex",
    "BM25Index",
    "IndexedDoc",
    "Section",
    "Tokenizer",
    "VectorTable",
    "chunk_text",
    "cosine",
    "decay_factor",
    "from_bytes",
    "fuse",
    "jaccard",
    "max_normalised",
    "min_max",
    "mmr",
    "normalise",
    "paragraphs",
    "rank",
    "rrf_fusion",
    "split_sections",
    "stopwords_for",
    "to_bytes",
    "tokenize",
    "weighted_fusion",
]
