"""An incremental BM25 index (Okapi BM25, Lucene's non-negative IDF).

Chosen over ``bm25s`` and the databases' full-text indexes by measurement (see
``docs/memory.md``): memory changes a few documents per turn and is searched every turn,
and this index adds or removes one document in O(its tokens) where ``bm25s`` rebuilds the
whole sparse matrix; it also scores identically on SQLite and PostgreSQL.

Invariants: document ids are caller-chosen ints; ``add`` of an existing id replaces it;
scores are > 0 exactly for documents sharing at least one query token.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np


class BM25Index:
    """Inverted index with BM25 scoring; documents are given as token lists."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[int, int]] = {}
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._doc_len: dict[int, int] = {}
        self._total_len = 0
        # derived numpy views, rebuilt lazily after a change touches them
        self._arrays_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._len_array: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    def add(self, doc_id: int, tokens: Iterable[str]) -> None:
        """Index (or re-index) one document."""
        if doc_id in self._doc_len:
            self.remove(doc_id)
        counts = Counter(tokens)
        length = sum(counts.values())
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[doc_id] = tf
            self._arrays_cache.pop(term, None)
        self._len_array = None
        self._doc_terms[doc_id] = tuple(counts)
        self._doc_len[doc_id] = length
        self._total_len += length

    def remove(self, doc_id: int) -> None:
        """Drop a document; unknown ids are ignored."""
        terms = self._doc_terms.pop(doc_id, None)
        if terms is None:
            return
        self._len_array = None
        for term in terms:
            self._arrays_cache.pop(term, None)
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(doc_id, None)
                if not posting:
                    del self._postings[term]
        self._total_len -= self._doc_len.pop(doc_id)

    def idf(self, term: str) -> float:
        n = len(self._postings.get(term, ()))
        return math.log(1.0 + (len(self._doc_len) - n + 0.5) / (n + 0.5))

    def _arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._arrays_cache.get(term)
        if cached is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            ids = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            tfs = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
            cached = self._arrays_cache[term] = (ids, tfs)
        return cached

    def _lengths(self) -> np.ndarray:
        if self._len_array is None:
            size = max(self._doc_len, default=-1) + 1
            arr = np.zeros(size, dtype=np.float64)
            if self._doc_len:
                ids = np.fromiter(self._doc_len.keys(), dtype=np.int64, count=len(self._doc_len))
                arr[ids] = np.fromiter(self._doc_len.values(), dtype=np.float64, count=len(ids))
            self._len_array = arr
        return self._len_array

    def score_array(self, query_tokens: Iterable[str]) -> np.ndarray:
        """Dense BM25 scores indexed by document id (0 for non-matching or absent ids)."""
        lengths = self._lengths()
        out = np.zeros(lengths.shape[0], dtype=np.float64)
        if not self._doc_len:
            return out
        avgdl = self._total_len / len(self._doc_len) or 1.0
        k1, b = self.k1, self.b
        for term in dict.fromkeys(query_tokens):
            arrays = self._arrays(term)
            if arrays is None:
                continue
            ids, tfs = arrays
            denom = tfs + k1 * (1.0 - b + b * lengths[ids] / avgdl)
            out[ids] += self.idf(term) * tfs * (k1 + 1.0) / denom
        return out

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
