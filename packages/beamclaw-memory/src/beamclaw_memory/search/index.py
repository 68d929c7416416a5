"""The per-agent in-process search index: BM25 postings plus a vector table.

An :class:`AgentIndex` mirrors one agent's rows. It is refreshed from the row store by
comparing ``changed_at`` versions (the service does that before every search), so it is a
cache: dropping it loses nothing. Each row occupies one integer slot, shared by the BM25
index, the vector table and the columns below; freed slots are reused.

Kept by columns, not by object (issue 18: every finished session's transcript stays
indexed, so what a row costs here is a per-session cost at rest): a row's key and text
(and its source and line range) sit in per-slot lists, its category, three
timestamps and (for a transcript chunk) its session's code and message ``seq`` in numpy
arrays, its tokens in the BM25 index as term ids. An
:class:`IndexedDoc` is built when asked for (:meth:`AgentIndex.doc`); the slot -> key map
and the timestamps answer the version checks of a sync.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from beamclaw_memory.backends.rows import MemoryRow, Signature
from beamclaw_memory.indexing.sources import transcript_position
from beamclaw_memory.search.bm25 import BM25Index
from beamclaw_memory.search.tokenizer import Tokenizer
from beamclaw_memory.search.vectors import VectorTable
from beamclaw_memory.service import MemoryCategory, SearchHit, SeenTranscript

_CATEGORIES = (None, *MemoryCategory)
"""Category code -> category (code 0: a free slot)."""
_CATEGORY_CODES = {c: i for i, c in enumerate(_CATEGORIES) if c is not None}
_CREATED, _UPDATED, _CHANGED = 0, 1, 2
"""Columns of the timestamp table."""


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
        self._slots: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._texts: list[str] = []
        self._sources: list[str | None] = []
        self._lines: list[tuple[int, int] | None] = []
        self._free: list[int] = []
        self._codes = np.zeros(64, dtype=np.int8)
        self._times = np.zeros((64, 3), dtype=np.float64)
        self._sessions = np.zeros(64, dtype=np.int32)
        """Slot -> the code of the session whose transcript chunk it holds (0: none)."""
        self._seqs = np.zeros(64, dtype=np.int32)
        """Slot -> the ``seq`` of the message a transcript chunk is part of."""
        self._session_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def versions(self) -> Mapping[str, float]:
        """``key -> changed_at`` of every row the index holds (a live view)."""
        return _Versions(self)

    def version(self, key: str) -> float | None:
        """The ``changed_at`` the index holds for ``key`` (None: not indexed)."""
        slot = self._slots.get(key)
        return None if slot is None else self._times.item(slot, _CHANGED)

    def note_versions(self, versions: Mapping[str, float]) -> None:
        """Record new ``changed_at`` values of rows the index holds (others are ignored:
        a row it does not hold has no version here)."""
        for key, changed_at in versions.items():
            slot = self._slots.get(key)
            if slot is not None:
                self._times[slot, _CHANGED] = changed_at

    def slot(self, key: str) -> int | None:
        return self._slots.get(key)

    def row_keys(self) -> Iterator[str]:
        """The keys of the rows the index holds."""
        return iter(self._slots)

    def key(self, slot: int) -> str:
        key = self._keys[slot]
        assert key is not None, f"slot {slot} is free"
        return key

    def text(self, slot: int) -> str:
        self.key(slot)  # asserts the slot is live
        return self._texts[slot]

    def category(self, slot: int) -> MemoryCategory:
        category = _CATEGORIES[int(self._codes[slot])]
        assert category is not None, f"slot {slot} is free"
        return category

    def created_at(self, slot: int) -> float:
        return self._times.item(slot, _CREATED)

    def doc(self, slot: int) -> IndexedDoc:
        return IndexedDoc(
            key=self.key(slot),
            text=self._texts[slot],
            category=self.category(slot),
            source=self._sources[slot],
            created_at=self._times.item(slot, _CREATED),
            updated_at=self._times.item(slot, _UPDATED),
            lines=self._lines[slot],
        )

    def hit(self, slot: int, score: float) -> SearchHit:
        """The slot's row as a search hit scoring ``score`` (rounded to 6 places, as the
        API shows scores)."""
        return SearchHit(
            key=self.key(slot),
            text=self._texts[slot],
            score=round(score, 6),
            category=self.category(slot),
            source=self._sources[slot],
            updated_at=self._times.item(slot, _UPDATED),
            lines=self._lines[slot],
        )

    def terms(self, slot: int) -> frozenset[int]:
        """The slot's distinct tokens, as BM25 term ids (equal sets: equal token sets)."""
        return self.bm25.terms(slot)

    def slots(self) -> list[int]:
        return list(self._slots.values())

    def apply(self, row: MemoryRow) -> None:
        """Insert or replace ``row``; its vector is kept when it is of ``vector_model``."""
        slot = self._slots.get(row.key)
        if slot is None or self._texts[slot] != row.value:
            if slot is None:
                slot = self._new_slot(row.key)
            self.bm25.add(slot, self.tokenizer(row.value))
        self._texts[slot] = row.value
        self._sources[slot] = row.source
        self._lines[slot] = row.lines
        self._codes[slot] = _CATEGORY_CODES[row.category]
        self._times[slot] = (row.created_at, row.updated_at, row.changed_at)
        position = transcript_position(row.key)
        if position is not None:
            session_id, seq = position
            code = self._session_codes.get(session_id)
            if code is None:
                code = self._session_codes[session_id] = len(self._session_codes) + 1
            self._sessions[slot], self._seqs[slot] = code, seq
        self.vectors.discard(slot)
        if (
            row.embedding is not None
            and self.vector_model is not None
            and row.embedding_model == self.vector_model
        ):
            self.set_vector(slot, row.embedding)

    def _new_slot(self, key: str) -> int:
        if self._free:
            slot = self._free.pop()
            self._keys[slot] = key
        else:
            slot = len(self._keys)
            self._keys.append(key)
            self._texts.append("")
            self._sources.append(None)
            self._lines.append(None)
            if slot >= self._codes.shape[0]:
                self._codes = np.concatenate([self._codes, np.zeros_like(self._codes)])
                self._times = np.concatenate([self._times, np.zeros_like(self._times)])
                self._sessions = np.concatenate([self._sessions, np.zeros_like(self._sessions)])
                self._seqs = np.concatenate([self._seqs, np.zeros_like(self._seqs)])
        self._slots[key] = slot
        return slot

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
        if slot is None:
            return
        self.bm25.remove(slot)
        self.vectors.discard(slot)
        self._keys[slot] = self._sources[slot] = self._lines[slot] = None
        self._texts[slot] = ""
        self._codes[slot] = 0
        self._times[slot] = 0.0
        self._sessions[slot] = self._seqs[slot] = 0
        self._free.append(slot)

    def mask(
        self, category: MemoryCategory | None, seen: SeenTranscript | None = None
    ) -> np.ndarray | None:
        """Bool mask over slots: those of ``category`` (any when None), less ``seen``'s
        transcript chunks (None = every live slot is allowed)."""
        mask = None if category is None else self._codes == _CATEGORY_CODES[category]
        if seen is None or (code := self._session_codes.get(seen.session_id)) is None:
            return mask  # (a session with no chunk here has nothing to leave out)
        shown = self._sessions == code
        shown &= self._seqs >= seen.from_seq
        if mask is None:
            return ~shown
        mask &= ~shown
        return mask

    def missing_vectors(self) -> list[int]:
        """Live slots without a vector of the current model."""
        return [s for s in self._slots.values() if not self.vectors.has(s)]


class _Versions(Mapping[str, float]):
    """:attr:`AgentIndex.versions`: the index's keys with their ``changed_at``."""

    def __init__(self, index: AgentIndex) -> None:
        self._index = index

    def __getitem__(self, key: str) -> float:
        version = self._index.version(key)
        if version is None:
            raise KeyError(key)
        return version

    def __iter__(self) -> Iterator[str]:
        return self._index.row_keys()

    def __len__(self) -> int:
        return len(self._index)
