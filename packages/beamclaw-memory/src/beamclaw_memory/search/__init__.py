"""Search building blocks: tokeniser, chunker, BM25, vectors, fusion and ranking."""

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
