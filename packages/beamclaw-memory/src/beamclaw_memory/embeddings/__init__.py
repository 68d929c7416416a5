"""Embeddings: the embedder port, the OpenAI-compatible client and the vector cache."""

from beamclaw_memory.embeddings.cache import EmbeddingCache, text_hash
from beamclaw_memory.embeddings.caching import CachingEmbedder
from beamclaw_memory.embeddings.client import Embedder, OpenAIEmbedder

__all__ = ["CachingEmbedder", "Embedder", "EmbeddingCache", "OpenAIEmbedder", "text_hash"]
