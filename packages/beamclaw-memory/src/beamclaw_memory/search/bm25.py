"""An incremental BM25 index (Okapi BM25, Lucene's non-negative IDF).

Chosen over ``bm25s`` and the databases' full-text indexes by measurement (see
``docs/memory.md``): memory changes a few documents per turn and is searched every turn,
and this index adds or removes one document in O(its tokens) where ``bm25s`` rebuilds the
whole sparse matrix; it also scores identically on SQLite and PostgreSQL.

Compact by design (every finished session's transcript stays indexed, issue 18): a term
is stored once, as the key of the term -> id table; a posting is two machine arrays
(``int32`` pairs of document id and term frequency); a document keeps only its distinct
term ids, as 4 bytes each, and its length in a shared array. Nothing per document is a
Python dict entry or a string.

Invariants: document ids are caller-chosen ints in ``[0, 2**31)``; ``add`` of an existing
id replaces it; scores are > 0 exactly for documents sharing at least one query token; a
document appears at most once in a term's posting (so ``out[ids] +=`` adds each once), and
a posting holds exactly the live documents with the term (a removal moves the posting's
last entry into the freed place: the order of a posting is not meaningful). Term ids of
emptied postings are reused. Removing a document costs one vectorised scan of each of its
terms' postings.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

MAX_DOC_ID = 2**31 - 1
"""The highest document id (postings store ids as ``int32``)."""


def _pairs(posting: array[int]) -> np.ndarray:
    """A view of ``posting`` as rows ``(doc_id, tf)``: it must not outlive the caller's
    statement (an array exporting its buffer cannot grow or shrink)."""
    return np.frombuffer(posting, dtype=np.int32).reshape(-1, 2)


def _drop(posting: array[int], doc_id: int) -> None:
    """Remove ``doc_id``'s pair (present exactly once): the last pair moves into it."""
    at = 2 * int(np.flatnonzero(_pairs(posting)[:, 0] == doc_id)[0])
    tf, last = posting.pop(), posting.pop()
    if at < len(posting):
        posting[at], posting[at + 1] = last, tf


class BM25Index:
    """Inverted index with BM25 scoring; documents are given as token lists.

    Adding or removing a document costs O(its distinct tokens) (amortised; a removal
    scans its terms' postings in numpy): postings and document lengths grow in place, so
    a search after a change costs the query's postings, never a rebuild.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._term_ids: dict[str, int] = {}
        self._terms: list[str | None] = []
        """Term id -> term (None: a free id, listed in ``_free_terms``)."""
        self._postings: list[array[int] | None] = []
        """Term id -> its posting: ``int32`` pairs ``doc_id, tf``, one per live document
        (never empty for a live term)."""
        self._free_terms: list[int] = []
        self._doc_terms: list[bytes | None] = []
        """Document id -> its distinct term ids (``int32`` bytes); None: not indexed."""
        self._count = 0
        self._total_len = 0
        self._lengths = np.zeros(16, dtype=np.float64)
        self._size = 0
        """One more than the highest document id ever added (the score array's length)."""

    def __len__(self) -> int:
        return self._count

    def __contains__(self, doc_id: object) -> bool:
        return (
            isinstance(doc_id, int)
            and 0 <= doc_id < len(self._doc_terms)
            and self._doc_terms[doc_id] is not None
        )

    def add(self, doc_id: int, tokens: Iterable[str]) -> None:
        """Index (or re-index) one document."""
        if not 0 <= doc_id <= MAX_DOC_ID:
            raise ValueError(f"document ids are in [0, {MAX_DOC_ID}], got {doc_id}")
        if doc_id in self:
            self.remove(doc_id)
        counts = Counter(tokens)
        length = sum(counts.values())
        term_ids = array("i")
        for term, tf in counts.items():
            term_id = self._term_ids.get(term)
            if term_id is None:
                term_id = self._new_term(term)
            posting = self._postings[term_id]
            assert posting is not None
            posting.extend((doc_id, tf))
            term_ids.append(term_id)
        if doc_id >= self._lengths.shape[0]:
            grown = np.zeros(max(doc_id + 1, self._lengths.shape[0] * 2), dtype=np.float64)
            grown[: self._lengths.shape[0]] = self._lengths
            self._lengths = grown
        if doc_id >= len(self._doc_terms):
            self._doc_terms.extend([None] * (doc_id + 1 - len(self._doc_terms)))
        self._lengths[doc_id] = length
        self._size = max(self._size, doc_id + 1)
        self._doc_terms[doc_id] = term_ids.tobytes()
        self._count += 1
        self._total_len += length

    def _new_term(self, term: str) -> int:
        if self._free_terms:
            term_id = self._free_terms.pop()
            self._terms[term_id], self._postings[term_id] = term, array("i")
        else:
            term_id = len(self._terms)
            self._terms.append(term)
            self._postings.append(array("i"))
        self._term_ids[term] = term_id
        return term_id

    def remove(self, doc_id: int) -> None:
        """Drop a document; unknown ids are ignored."""
        if doc_id not in self:
            return
        packed = self._doc_terms[doc_id]
        assert packed is not None
        term_ids = array("i")
        term_ids.frombytes(packed)
        for term_id in term_ids:
            posting = self._postings[term_id]
            assert posting is not None
            _drop(posting, doc_id)
            if not posting:
                term = self._terms[term_id]
                assert term is not None
                del self._term_ids[term]
                self._terms[term_id] = self._postings[term_id] = None
                self._free_terms.append(term_id)
        self._doc_terms[doc_id] = None
        self._count -= 1
        self._total_len -= int(self._lengths[doc_id])
        self._lengths[doc_id] = 0.0

    def terms(self, doc_id: int) -> frozenset[int]:
        """The ids of a document's distinct terms (equal sets: equal token sets); empty
        for an unknown id."""
        if doc_id not in self:
            return frozenset()
        packed = self._doc_terms[doc_id]
        assert packed is not None
        term_ids = array("i")
        term_ids.frombytes(packed)
        return frozenset(term_ids)

    def _df(self, term: str) -> int:
        term_id = self._term_ids.get(term)
        if term_id is None:
            return 0
        posting = self._postings[term_id]
        return len(posting) // 2 if posting is not None else 0

    def idf(self, term: str) -> float:
        n = self._df(term)
        return math.log(1.0 + (self._count - n + 0.5) / (n + 0.5))

    def score_array(self, query_tokens: Iterable[str]) -> np.ndarray:
        """Dense BM25 scores indexed by document id (0 for non-matching or absent ids)."""
        out = np.zeros(self._size, dtype=np.float64)
        if not self._count:
            return out
        lengths = self._lengths
        avgdl = self._total_len / self._count or 1.0
        k1, b = self.k1, self.b
        for term in dict.fromkeys(query_tokens):
            term_id = self._term_ids.get(term)
            if term_id is None:
                continue
            posting = self._postings[term_id]
            assert posting is not None
            # copies, not views: a view would pin the array's size until it is collected
            ids = _pairs(posting)[:, 0].astype(np.intp)
            tfs = _pairs(posting)[:, 1].astype(np.float64)
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
