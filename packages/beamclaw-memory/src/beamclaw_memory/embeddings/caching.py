"""An :class:`Embedder` that consults an :class:`EmbeddingCache` before the endpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from beamclaw_memory.embeddings.cache import EmbeddingCache
from beamclaw_memory.embeddings.client import Embedder

if TYPE_CHECKING:
    import numpy as np


class CachingEmbedder:
    """Embeds only the texts the cache does not hold, then caches the new vectors.

    Duplicate texts within one call are sent once.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimensions(self) -> int | None:
        return self.inner.dimensions

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        found = await self.cache.get_many(self.model, texts, self.dimensions)
        missing = list(dict.fromkeys(t for i, t in enumerate(texts) if i not in found))
        if missing:
            fresh = await self.inner.embed(missing)
            await self.cache.put_many(self.model, missing, fresh)
            by_text = dict(zip(missing, fresh, strict=True))
            for i, text in enumerate(texts):
                if i not in found:
                    found[i] = by_text[text]
        return [found[i] for i in range(len(texts))]

    async def aclose(self) -> None:
        await self.inner.aclose()
