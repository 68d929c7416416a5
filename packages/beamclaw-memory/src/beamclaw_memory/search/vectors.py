"""Vector math for semantic search (numpy, one BLAS thread).

Importing this module limits the BLAS thread pools of the process to one thread
(threadpoolctl): the matrix-vector products here are small, and a BLAS library spinning up
a thread per core would compete with the event loop and every other session for no gain.

Invariants of :class:`VectorTable`: rows are L2-normalised float32; a slot is either
occupied by exactly one key's vector or free; all vectors share one dimension, set by the
first vector added after the table was empty.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

BLAS_THREADS = 1
threadpool_limits(limits=BLAS_THREADS, user_api="blas")


def normalise(vector: np.ndarray) -> np.ndarray:
    """The L2-normalised float32 copy of ``vector`` (a zero vector stays zero)."""
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0.0 else v.copy()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (0.0 when either is zero)."""
    return float(np.dot(normalise(a), normalise(b)))


def to_bytes(vector: np.ndarray) -> bytes:
    """Little-endian float32 bytes, the storage format of ``memory_entries.embedding``."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes) -> np.ndarray:
    """Inverse of :func:`to_bytes`."""
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


class VectorTable:
    """Normalised vectors in a growable matrix, addressed by integer slot."""

    def __init__(self, initial_capacity: int = 64) -> None:
        self._capacity = max(1, initial_capacity)
        self._matrix: np.ndarray | None = None
        self._used = np.zeros(self._capacity, dtype=bool)
        self.dimensions: int | None = None

    def __len__(self) -> int:
        return int(self._used.sum())

    def _grow(self, slot: int) -> None:
        if slot < self._capacity:
            return
        new_cap = max(slot + 1, self._capacity * 2)
        used = np.zeros(new_cap, dtype=bool)
        used[: self._capacity] = self._used
        self._used = used
        if self._matrix is not None:
            matrix = np.zeros((new_cap, self._matrix.shape[1]), dtype=np.float32)
            matrix[: self._capacity] = self._matrix
            self._matrix = matrix
        self._capacity = new_cap

    def put(self, slot: int, vector: np.ndarray) -> None:
        """Store ``vector`` at ``slot``. Raises ValueError on a dimension mismatch."""
        v = normalise(vector)
        if self.dimensions is None or not self._used.any():
            self.dimensions = int(v.shape[0])
            self._matrix = np.zeros((self._capacity, self.dimensions), dtype=np.float32)
        if v.shape[0] != self.dimensions:
            raise ValueError(f"vector has {v.shape[0]} dimensions, the table {self.dimensions}")
        self._grow(slot)
        assert self._matrix is not None
        self._matrix[slot] = v
        self._used[slot] = True

    def discard(self, slot: int) -> None:
        if slot < self._capacity:
            self._used[slot] = False

    def has(self, slot: int) -> bool:
        return slot < self._capacity and bool(self._used[slot])

    def get(self, slot: int) -> np.ndarray | None:
        if not self.has(slot) or self._matrix is None:
            return None
        return self._matrix[slot]

    def similarities(self, query: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Cosine similarity of ``query`` with every slot; -inf for empty/masked slots.

        Raises ValueError when ``query`` has a different dimension than the table.
        """
        out = np.full(self._capacity, -np.inf, dtype=np.float32)
        if self._matrix is None or self.dimensions is None:
            return out
        q = normalise(query)
        if q.shape[0] != self.dimensions:
            raise ValueError(f"query has {q.shape[0]} dimensions, the table {self.dimensions}")
        usable = self._used.copy()
        if mask is not None:
            n = min(usable.shape[0], mask.shape[0])
            usable[:n] &= mask[:n]
            usable[n:] = False
        rows = np.flatnonzero(usable)
        if rows.size:
            out[rows] = self._matrix[rows] @ q
        return out

    def top(
        self, query: np.ndarray, k: int, mask: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` most similar ``(slot, cosine)`` pairs, best first."""
        sims = self.similarities(query, mask)
        valid = np.flatnonzero(np.isfinite(sims))
        if valid.size > k:
            valid = valid[np.argpartition(-sims[valid], k - 1)[:k]]
        ranked = sorted(valid.tolist(), key=lambda i: (-float(sims[i]), i))
        return [(i, float(sims[i])) for i in ranked]
