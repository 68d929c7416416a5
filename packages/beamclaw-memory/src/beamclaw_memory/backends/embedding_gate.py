"""The embedding endpoint as the memory service uses it: a failure closes the gate.

Invariant: after the endpoint fails, no call reaches it for ``cooldown_seconds`` (by
``clock``); :meth:`EmbeddingGate.embed` raises :class:`EmbeddingUnavailableError` at
once instead, saying why and when it is retried. A reply with the wrong number of
vectors is an error too, never a partial result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from beamclaw_memory.embeddings.client import Embedder
from beamclaw_memory.errors import EmbeddingError, EmbeddingUnavailableError
from beamclaw_obs import EventType, emit

if TYPE_CHECKING:
    import numpy as np


class EmbeddingGate:
    """An :class:`Embedder` behind the failure cooldown (``embedder`` None: none set up)."""

    def __init__(
        self, embedder: Embedder | None, *, cooldown_seconds: float, clock: Callable[[], float]
    ) -> None:
        self.embedder = embedder
        self._cooldown = cooldown_seconds
        self._clock = clock
        self._blocked_until = 0.0
        self._failure = ""

    @property
    def model(self) -> str | None:
        """The embedding model, or None without an embedder."""
        return self.embedder.model if self.embedder is not None else None

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One vector per text. Raises :class:`EmbeddingError` (the gate then closes)."""
        assert self.embedder is not None
        now = self._clock()
        if now < self._blocked_until:
            raise EmbeddingUnavailableError(
                self.embedder.model,
                f"{self._failure} (endpoint retried after {self._blocked_until - now:.0f}s)",
            )
        try:
            vectors = await self.embedder.embed(texts)
        except EmbeddingError as exc:
            self._failure = exc.reason
            self._blocked_until = self._clock() + self._cooldown
            raise
        if len(vectors) != len(texts):
            raise EmbeddingUnavailableError(
                self.embedder.model, f"asked for {len(texts)} vectors, got {len(vectors)}"
            )
        return vectors

    async def try_embed(self, texts: Sequence[str]) -> tuple[list[np.ndarray] | None, str | None]:
        """Vectors for ``texts`` or ``(None, reason)``; never raises (indexing goes on)."""
        if self.embedder is None or not texts:
            return None, None
        try:
            return await self.embed(texts), None
        except EmbeddingError as exc:
            emit(EventType.MEMORY_DEGRADED, model=exc.model, reason=exc.reason)
            return None, exc.reason

    async def aclose(self) -> None:
        if self.embedder is not None:
            await self.embedder.aclose()
