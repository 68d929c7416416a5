"""The embedding cache: vectors keyed by (model, sha256(text)), with a TTL.

Two layers: a process dictionary and, when a :class:`~beamclaw_memory.Database` is given,
the ``embedding_cache`` table, so a restarted process does not pay the endpoint again.
Invariants: an entry older than ``ttl_seconds`` (when > 0) is a miss and is removed; an
entry whose dimension differs from the one asked for is a miss (a changed ``dimensions``
setting never serves stale vectors); ``invalidate`` removes from both layers. numpy is
imported by the first vector read or stored, not with the module.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import sqlalchemy as sa

from beamclaw_memory.dialect import dialect_insert
from beamclaw_memory.storage import Database
from beamclaw_memory.tables import embedding_cache
from beamclaw_memory.unit import Unit

if TYPE_CHECKING:
    import numpy as np


def text_hash(text: str) -> str:
    """The cache key of a text: hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Process-local plus (optionally) persistent cache of embedding vectors."""

    def __init__(
        self,
        database: Database | None = None,
        *,
        ttl_seconds: float = 86_400.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self._ttl = ttl_seconds
        self._clock = clock
        self._memory: dict[tuple[str, str], tuple[np.ndarray, float]] = {}
        self.hits = 0
        self.misses = 0

    def _fresh(self, created_at: float) -> bool:
        return self._ttl <= 0 or self._clock() - created_at < self._ttl

    async def get_many(
        self, model: str, texts: Sequence[str], dimensions: int | None = None
    ) -> dict[int, np.ndarray]:
        """Cached vectors for ``texts`` by input index (misses are absent)."""
        found: dict[int, np.ndarray] = {}
        wanted: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            h = text_hash(text)
            item = self._memory.get((model, h))
            if item is not None and self._fresh(item[1]) and _dims_ok(item[0], dimensions):
                found[i] = item[0]
            else:
                self._memory.pop((model, h), None)
                wanted.setdefault(h, []).append(i)
        if wanted and self._db is not None:
            await self._load(model, wanted, dimensions, found)
        self.hits += len(found)
        self.misses += len(texts) - len(found)
        return found

    async def _load(
        self,
        model: str,
        wanted: dict[str, list[int]],
        dimensions: int | None,
        found: dict[int, np.ndarray],
    ) -> None:
        assert self._db is not None
        hashes = list(wanted)
        stale: list[str] = []

        def work(unit: Unit) -> list[tuple[str, bytes, float]]:
            rows: list[tuple[str, bytes, float]] = []
            for start in range(0, len(hashes), 500):
                part = hashes[start : start + 500]
                result = unit.execute(
                    sa.select(
                        embedding_cache.c.text_hash,
                        embedding_cache.c.vector,
                        embedding_cache.c.created_at,
                    ).where(embedding_cache.c.model == model, embedding_cache.c.text_hash.in_(part))
                )
                rows.extend((r[0], r[1], r[2]) for r in result)
            return rows

        from beamclaw_memory.search.vectors import from_bytes  # numpy: with the first vector

        for h, blob, created_at in await self._db.read(work):
            vector = from_bytes(blob)
            if not self._fresh(created_at) or not _dims_ok(vector, dimensions):
                stale.append(h)
                continue
            self._memory[(model, h)] = (vector, created_at)
            for i in wanted[h]:
                found[i] = vector
        if stale:
            await self._delete(model, stale)

    async def put_many(
        self, model: str, texts: Sequence[str], vectors: Sequence[np.ndarray]
    ) -> None:
        """Remember ``vectors[i]`` as the embedding of ``texts[i]``."""
        import numpy as np

        from beamclaw_memory.search.vectors import to_bytes

        now = self._clock()
        rows: dict[str, dict[str, object]] = {}
        for text, vector in zip(texts, vectors, strict=True):
            h = text_hash(text)
            v = np.asarray(vector, dtype=np.float32)
            self._memory[(model, h)] = (v, now)
            rows[h] = {
                "model": model,
                "text_hash": h,
                "dimensions": int(v.shape[0]),
                "vector": to_bytes(v),
                "created_at": now,
            }
        if rows and self._db is not None:
            stmt = _upsert(self._db.dialect)
            values = list(rows.values())
            await self._db.write(lambda unit: unit.execute(stmt, values))

    async def invalidate(self, model: str | None = None) -> None:
        """Forget every vector of ``model`` (all models when None)."""
        self._memory = {
            k: v for k, v in self._memory.items() if model is not None and k[0] != model
        }
        if self._db is not None:
            stmt = sa.delete(embedding_cache)
            if model is not None:
                stmt = stmt.where(embedding_cache.c.model == model)
            await self._db.write(lambda unit: unit.execute(stmt))

    async def purge_expired(self) -> int:
        """Delete expired entries from both layers; returns the persistent rows removed."""
        if self._ttl <= 0:
            return 0
        cutoff = self._clock() - self._ttl
        self._memory = {k: v for k, v in self._memory.items() if v[1] > cutoff}
        if self._db is None:
            return 0
        stmt = sa.delete(embedding_cache).where(embedding_cache.c.created_at <= cutoff)
        return await self._db.write(lambda unit: int(unit.execute(stmt).rowcount or 0))

    async def _delete(self, model: str, hashes: list[str]) -> None:
        assert self._db is not None
        stmt = sa.delete(embedding_cache).where(
            embedding_cache.c.model == model, embedding_cache.c.text_hash.in_(hashes)
        )
        await self._db.write(lambda unit: unit.execute(stmt))


def _dims_ok(vector: np.ndarray, dimensions: int | None) -> bool:
    return dimensions is None or int(vector.shape[0]) == dimensions


def _upsert(dialect: str) -> sa.Insert:
    """``INSERT … ON CONFLICT (model, text_hash) DO UPDATE`` for SQLite and PostgreSQL."""
    insert = dialect_insert(dialect, embedding_cache)
    return insert.on_conflict_do_update(
        index_elements=["model", "text_hash"],
        set_={c: insert.excluded[c] for c in ("dimensions", "vector", "created_at")},
    )
