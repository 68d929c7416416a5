"""The per-agent in-process search index: BM25 postings plus a vector table.

An :class:`AgentIndex` mirrors one agent's rows. It is refreshed from the row store by
comparing ``changed_at`` versions (the service does that before every search), so it is a
cache: dropping it loses nothing. Each row occupies one integer slot, shared by the BM25
index, the vector table and the category codes; freed slots are reused. A row's tokens
live only in the BM25 index (as term ids), so a document costs its text, key and a few
machine words (issue 18: finished sessions' transcripts stay indexed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from beamclaw_memory.backends.rows import MemoryRow, Signature
from beamclaw_memory.search.bm25 import BM25Index
from beamclaw_memory.search.tokenizer import Tokenizer
from beamclaw_memory.search.vectors import VectorTable
from beamclaw_memory.service import MemoryCategory

_CATEGORY_CODES = {c: i + 1 for i, c in enumerate(MemoryCategory)}


@dataclass(frozen=True, slots=True)
class IndexedDoc:
    """What the index keeps of a row (no vector: that lives in the vector table; no
    tokens: those live in the BM25 index, see :meth:`AgentIndex.terms`)."""

    key: str
    text: str
    category: MemoryCategory
    source: str | None
    created_at: float
    updated_at: float
    lines: tuple[int, int] | None = None


class AgentIndex:
    """BM25 + vectors over one agent's rows, addressed by slot."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.bm25 = BM25Index()
        self.vectors = VectorTable()
        self.vector_model: str | None = None
        self.signature: Signature | None = None
        self.versions: dict[str, float] = {}
        self._slots: dict[str, int] = {}
        self._docs: list[IndexedDoc | None] = []
        self._free: list[int] = []
        self._codes = np.zeros(64, dtype=np.int8)

    def __len__(self) -> int:
        return len(self._slots)

    def slot(self, key: str) -> int | None:
        return self._slots.get(key)

    def doc(self, slot: int) -> IndexedDoc:
        doc = self._docs[slot]
        assert doc is not None, f"slot {slot} is free"
        return doc

    def terms(self, slot: int) -> frozenset[int]:
        """The slot's distinct tokens, as BM25 term ids (equal sets: equal token sets)."""
        return self.bm25.terms(slot)

    def slots(self) -> list[int]:
        return list(self._slots.values())

    def apply(self, row: MemoryRow) -> None:
        """Insert or replace ``row``; its vector is kept when it is of ``vector_model``."""
        slot = self._slots.get(row.key)
        old = self._docs[slot] if slot is not None else None
        if slot is None:
            slot = self._free.pop() if self._free else len(self._docs)
            if slot == len(self._docs):
                self._docs.append(None)
            self._slots[row.key] = slot
        if old is None or old.text != row.value:
            self.bm25.add(slot, self.tokenizer(row.value))
        self._docs[slot] = IndexedDoc(
            key=row.key,
            text=row.value,
            category=row.category,
            source=row.source,
            created_at=row.created_at,
            updated_at=row.updated_at,
            lines=row.lines,
        )
        self._set_code(slot, _CATEGORY_CODES[row.category])
        self.versions[row.key] = row.changed_at
        self.vectors.discard(slot)
        if (
            row.embedding is not None
            and self.vector_model is not None
            and row.embedding_model == self.vector_model
        ):
            self.set_vector(slot, row.embedding)

    def set_vector(self, slot: int, vector: np.ndarray) -> bool:
        """Attach a vector; False (and nothing stored) when its dimension does not fit."""
        try:
            self.vectors.put(slot, vector)
        except ValueError:
            return False
        return True

    def reset_vectors(self, model: str | None) -> None:
        """Drop every vector (the embedding model changed or its vectors went stale)."""
        self.vectors = VectorTable()
        self.vector_model = model

    def remove(self, key: str) -> None:
        slot = self._slots.pop(key, None)
        self.versions.pop(key, None)
        if slot is None:
            return
        self.bm25.remove(slot)
        self.vectors.discard(slot)
        self._docs[slot] = None
        self._set_code(slot, 0)
        self._free.append(slot)

    def _set_code(self, slot: int, code: int) -> None:
        if slot >= self._codes.shape[0]:
            grown = np.zeros(max(slot + 1, self._codes.shape[0] * 2), dtype=np.int8)
            grown[: self._codes.shape[0]] = self._codes
            self._codes = grown
        self._codes[slot] = code

    def mask(self, category: MemoryCategory | None) -> np.ndarray | None:
        """Bool mask over slots of one category (None = every live slot is allowed)."""
        if category is None:
            return None
        return self._codes == _CATEGORY_CODES[category]

    def missing_vectors(self) -> list[int]:
        """Live slots without a vector of the current model."""
        return [s for s in self._slots.values() if not self.vectors.has(s)]
