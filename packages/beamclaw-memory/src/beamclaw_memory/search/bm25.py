"""An incremental BM25 index (Okapi BM25, Lucene's non-negative IDF).

Chosen over ``bm25s`` and the databases' full-text indexes by measurement (see
``docs/memory.md``): memory changes a few documents per turn and is searched every turn,
and this index adds or removes one document in O(its tokens) where ``bm25s`` rebuilds the
whole sparse matrix; it also scores identically on SQLite and PostgreSQL.

Invariants: document ids are caller-chosen ints >= 0; ``add`` of an existing id replaces
it; scores are > 0 exactly for documents sharing at least one query token; a document
appears at most once among a term's live postings (so ``out[ids] +=`` adds each once).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

_FREE = -1
"""The document id of a removed posting entry: numpy reads index -1 as the score
array's extra last cell, which is thrown away."""


class _Posting:
    """One term's postings as growable parallel arrays, appended to in O(1): a removed
    entry keeps its place with tf 0 and id :data:`_FREE` until the arrays are compacted
    (when half of them are removed entries)."""

    __slots__ = ("at", "ids", "size", "tfs")

    def __init__(self) -> None:
        self.at: dict[int, int] = {}
        """Live document id -> its position in the arrays."""
        self.ids = np.empty(4, dtype=np.int64)
        self.tfs = np.empty(4, dtype=np.float64)
        self.size = 0

    def add(self, doc_id: int, tf: int) -> None:
        if self.size == self.ids.shape[0]:
            self.ids = np.resize(self.ids, self.size * 2)
            self.tfs = np.resize(self.tfs, self.size * 2)
        self.ids[self.size] = doc_id
        self.tfs[self.size] = tf
        self.at[doc_id] = self.size
        self.size += 1

    def remove(self, doc_id: int) -> None:
        pos = self.at.pop(doc_id, None)
        if pos is None:
            return
        self.ids[pos] = _FREE
        self.tfs[pos] = 0.0
        if self.size >= 16 and len(self.at) * 2 < self.size:
            live = self.ids[: self.size] != _FREE
            ids, tfs = self.ids[: self.size][live], self.tfs[: self.size][live]
            self.size = ids.shape[0]
            self.ids[: self.size], self.tfs[: self.size] = ids, tfs
            self.at = {int(d): i for i, d in enumerate(ids.tolist())}

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self.ids[: self.size], self.tfs[: self.size]


class BM25Index:
    """Inverted index with BM25 scoring; documents are given as token lists.

    Adding or removing a document costs O(its distinct tokens) (amortised): the postings
    and document lengths are kept as numpy arrays that grow in place, so a search after
    a change costs the query's postings, never a rebuild of what did not change.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, _Posting] = {}
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._doc_len: dict[int, int] = {}
        self._total_len = 0
        self._lengths = np.zeros(16, dtype=np.float64)
        self._size = 0
        """One more than the highest document id ever added (the score array's length)."""

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    def add(self, doc_id: int, tokens: Iterable[str]) -> None:
        """Index (or re-index) one document."""
        if doc_id < 0:
            raise ValueError(f"document ids are >= 0, got {doc_id}")
        if doc_id in self._doc_len:
            self.remove(doc_id)
        counts = Counter(tokens)
        length = sum(counts.values())
        for term, tf in counts.items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = _Posting()
            posting.add(doc_id, tf)
        if doc_id >= self._lengths.shape[0]:
            grown = np.zeros(max(doc_id + 1, self._lengths.shape[0] * 2), dtype=np.float64)
            grown[: self._lengths.shape[0]] = self._lengths
            self._lengths = grown
        self._lengths[doc_id] = length
        self._size = max(self._size, doc_id + 1)
        self._doc_terms[doc_id] = tuple(counts)
        self._doc_len[doc_id] = length
        self._total_len += length

    def remove(self, doc_id: int) -> None:
        """Drop a document; unknown ids are ignored."""
        terms = self._doc_terms.pop(doc_id, None)
        if terms is None:
            return
        for term in terms:
            posting = self._postings.get(term)
            if posting is not None:
                posting.remove(doc_id)
                if not posting.at:
                    del self._postings[term]
        self._lengths[doc_id] = 0.0
        self._total_len -= self._doc_len.pop(doc_id)

    def idf(self, term: str) -> float:
        posting = self._postings.get(term)
        n = len(posting.at) if posting is not None else 0
        return math.log(1.0 + (len(self._doc_len) - n + 0.5) / (n + 0.5))

    def score_array(self, query_tokens: Iterable[str]) -> np.ndarray:
        """Dense BM25 scores indexed by document id (0 for non-matching or absent ids)."""
        out = np.zeros(self._size + 1, dtype=np.float64)  # + the cell of removed entries
        if not self._doc_len:
            return out[: self._size]
        lengths = self._lengths
        avgdl = self._total_len / len(self._doc_len) or 1.0
        k1, b = self.k1, self.b
        for term in dict.fromkeys(query_tokens):
            posting = self._postings.get(term)
            if posting is None:
                continue
            ids, tfs = posting.arrays()
            denom = tfs + k1 * (1.0 - b + b * lengths[ids] / avgdl)
            out[ids] += self.idf(term) * tfs * (k1 + 1.0) / denom
        return out[: self._size]

    def scores(
        self, query_tokens: Iterable[str], allow: Callable[[int], bool] | None = None
    ) -> dict[int, float]:
        """BM25 score of every matching document (optionally filtered by ``allow``)."""
        dense = self.score_array(query_tokens)
        hits = np.flatnonzero(dense > 0.0)
        return {int(i): float(dense[i]) for i in hits if allow is None or allow(int(i))}

    def top(
        self, query_tokens: Iterable[str], k: int, mask: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(doc_id, score)`` pairs with score > 0, best first.

        ``mask`` (bool, indexed by doc id) restricts the candidates (e.g. one category).
        """
        dense = self.score_array(query_tokens)
        if mask is not None:
            usable = min(dense.shape[0], mask.shape[0])
            dense = dense[:usable] * mask[:usable]
        hits = np.flatnonzero(dense > 0.0)
        if hits.size > k:
            part = np.argpartition(-dense[hits], k - 1)[:k]
            hits = hits[part]
        ranked = sorted(hits.tolist(), key=lambda i: (-dense[i], i))
        return [(i, float(dense[i])) for i in ranked]
