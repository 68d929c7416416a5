"""Embeddings: the embedder port, the OpenAI-compatible client and the vector cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_memory.embeddings.cache import EmbeddingCache, text_hash
    from beamclaw_memory.embeddings.caching import CachingEmbedder
    from beamclaw_memory.embeddings.client import Embedder, OpenAIEmbedder
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_memory.embeddings.cache": ("EmbeddingCache", "text_hash"),
            "beamclaw_memory.embeddings.caching": ("CachingEmbedder",),
            "beamclaw_memory.embeddings.client": ("Embedder", "OpenAIEmbedder"),
        },
    )

__all__ = ["CachingEmbedder", "Embedder", "EmbeddingCache", "OpenAIEmbedder", "text_hash"]
