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
document appears at most once in a term's posting, and a posting holds exactly the live
documents with the term (a removal moves the posting's last entry into the freed place:
the order of a posting is not meaningful). Term ids of emptied postings are reused.
Removing a document costs one vectorised scan of each of its terms' postings.

A search reads the query terms' postings once, as one array, and sums each document's
shares term after term in query order (``np.bincount``), so its scores are, bit for bit,
the formula's summed in that order; when the postings hold few entries for the range of
ids, it sums over the matching ids alone and allocates nothing of the index's size. A
search's mask drops the pairs of documents it leaves out before any arithmetic (a
document's pairs go together, so the others' sums are unchanged). A one-term search has
nothing to sum (a posting holds a document once): :meth:`BM25Index.top` ranks its shares
as they are, in posting order, with no sort of the ids.

:meth:`BM25Index.top` skips most of the longest postings when it can prove they do not
change the answer (MaxScore, Turtle and Flood 1995): the query's rarest terms are scored
first, and when the ``k``-th best of those partial scores already exceeds the most the
common terms could add together (``idf * (k1 + 1)`` each), no document outside the rare
terms' matches can reach the top ``k``, so the common terms' postings are read only for
those matches. Scores are unchanged bit for bit (each document's shares are summed in
query order either way); ties at the ``k``-th score keep the lowest ids, on both paths.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np

MAX_DOC_ID = 2**31 - 1
"""The highest document id (postings store ids as ``int32``)."""
SPARSE_RATIO = 64
"""A search whose postings hold fewer than one entry per ``SPARSE_RATIO`` document ids
sums them by sorting the ids (``np.unique``) instead of in an array of every id (where
the two cost the same, measured with numpy 2.4)."""
PRUNE_RATIO = 4.0
""":meth:`BM25Index.top` tries to skip the common terms' postings when they hold at least
this many times the entries of the rest (below that, scoring them all costs about what
the attempt does)..."""
PRUNE_MIN_ENTRIES = 20_000
"""... and at least this many entries: below that, a search's numpy calls cost more than
its arithmetic, and the attempt's extra calls cost more than they save."""
_BOUND_MARGIN = 1.0 + 1e-9
"""Head-room on the most the common terms can add: a computed share may round a few ulps
above its exact bound."""


def _pairs(posting: array[int]) -> np.ndarray:
    """A view of ``posting`` as rows ``(doc_id, tf)``: it must not outlive the caller's
    statement (an array exporting its buffer cannot grow or shrink)."""
    return np.frombuffer(posting, dtype=np.int32).reshape(-1, 2)


def _idf(count: int, df: int) -> float:
    """Lucene's non-negative IDF of a term in ``df`` of ``count`` documents (> 0)."""
    return math.log(1.0 + (count - df + 0.5) / (df + 0.5))


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
    ``prune_ratio``, ``prune_min_entries``: see :data:`PRUNE_RATIO` (both 0: always try).
    """

    def __init__(
        self,
        k1: float = 1.2,
        b: float = 0.75,
        *,
        prune_ratio: float = PRUNE_RATIO,
        prune_min_entries: int = PRUNE_MIN_ENTRIES,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.prune_ratio = prune_ratio
        self.prune_min_entries = prune_min_entries
        self.pruned = 0
        """Searches of :meth:`top` that read the common terms' postings only for the rare
        terms' matches."""
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
        return _idf(self._count, self._df(term))

    def _query(self, query_tokens: Iterable[str]) -> list[tuple[array[int], int, float]]:
        """Each distinct indexed query term, in query order: its posting, its document
        frequency and its IDF."""
        terms: list[tuple[array[int], int, float]] = []
        for term in dict.fromkeys(query_tokens):
            term_id = self._term_ids.get(term)
            if term_id is None:
                continue
            posting = self._postings[term_id]
            assert posting is not None
            df = len(posting) // 2
            terms.append((posting, df, _idf(self._count, df)))
        return terms

    def _matches(
        self, query_tokens: Iterable[str], mask: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Every (query term, document) pair of a document ``mask`` allows (see
        :meth:`matching`): the document ids and the term's BM25 share, term after term in
        the query's order (None: no such pair). A term's IDF counts every document.

        Summing the shares of an id in this order (``np.bincount`` adds weights in input
        order) gives, bit for bit, what adding one term's array after another does.
        """
        if not self._count:
            return None
        return self._shares(self._query(query_tokens), mask)

    def _shares(
        self, terms: list[tuple[array[int], int, float]], allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`_matches` of ``terms`` (:meth:`_query`'s, in query order), keeping the
        pairs of the documents ``allowed`` allows (a bool array by doc id; ids past its
        end are not), dropped before the arithmetic."""
        if not terms:
            return None
        if allowed is None:
            sizes = [df for _, df, _ in terms]
            # a copy, so no view pins a posting's size past this statement
            pairs = np.concatenate([np.frombuffer(p, dtype=np.int32) for p, _, _ in terms])
            pairs = pairs.reshape(-1, 2)
        else:  # each posting on its own: no copy of what is dropped
            parts: list[np.ndarray] = []
            for posting, _, _ in terms:
                rows = _pairs(posting)
                ids = rows[:, 0]
                if allowed.shape[0] >= self._size:  # every live id is below _size
                    keep = allowed[ids]
                else:
                    keep = ids < allowed.shape[0]
                    keep[keep] = allowed[ids[keep]]
                parts.append(np.compress(keep, rows, axis=0))  # rows[keep]: ten times slower
            sizes = [rows.shape[0] for rows in parts]
            pairs = np.concatenate(parts)
            del parts
            if not pairs.shape[0]:
                return None
        idf: np.ndarray | float = (
            np.array([i for _, _, i in terms]).repeat(sizes) if len(terms) > 1 else terms[0][2]
        )
        ids = pairs[:, 0].astype(np.intp)  # numpy gathers by intp fastest
        tfs = pairs[:, 1].astype(np.float64)
        k1, b = self.k1, self.b
        avgdl = self._total_len / self._count or 1.0
        # tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl)), in place (IEEE + and *
        # commute bit for bit, so the operands' order does not matter, only the grouping)
        denom = self._lengths[ids]
        denom *= b
        denom /= avgdl
        denom += 1.0 - b
        denom *= k1
        denom += tfs
        shares = tfs
        shares *= idf
        shares *= k1 + 1.0
        shares /= denom
        return ids, shares

    def score_array(self, query_tokens: Iterable[str]) -> np.ndarray:
        """Dense BM25 scores indexed by document id (0 for non-matching or absent ids)."""
        matches = self._matches(query_tokens)
        if matches is None:
            return np.zeros(self._size, dtype=np.float64)
        ids, shares = matches
        return np.bincount(ids, weights=shares, minlength=self._size)

    def matching(
        self, query_tokens: Iterable[str], mask: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ids (ascending) and BM25 scores of the documents sharing a query token
        (and allowed by ``mask``, a bool array by doc id: ids past its end are not).

        Equal, bit for bit, to the positive entries of :meth:`score_array`; when few
        documents match it builds nothing of the index's size.
        """
        return self._summed(self._matches(query_tokens, mask))

    def _summed(
        self, matches: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ids (ascending) and summed scores of :meth:`_shares`' pairs."""
        if matches is None:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64)
        ids, shares = matches
        if ids.shape[0] * SPARSE_RATIO < self._size:
            found, where = np.unique(ids, return_inverse=True)
            scores = np.bincount(where, weights=shares)
        else:
            dense = np.bincount(ids, weights=shares, minlength=self._size)
            found = np.flatnonzero(dense > 0.0)
            scores = dense[found]
        return found, scores

    def scores(
        self, query_tokens: Iterable[str], allow: Callable[[int], bool] | None = None
    ) -> dict[int, float]:
        """BM25 score of every matching document (optionally filtered by ``allow``)."""
        found, scores = self.matching(query_tokens)
        return {
            i: s
            for i, s in zip(found.tolist(), scores.tolist(), strict=True)
            if allow is None or allow(i)
        }

    def top(
        self, query_tokens: Iterable[str], k: int, mask: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(doc_id, score)`` pairs with score > 0, best first (equal
        scores by id; of the documents tied at the ``k``-th score, the lowest ids).

        ``mask`` (bool, indexed by doc id) restricts the candidates (e.g. one category).
        The scores are :meth:`matching`'s; the longest postings may be read only in part
        (see the module).
        """
        if k < 1 or not self._count:
            return []
        terms = self._query(query_tokens)
        if len(terms) == 1:
            found, scores = self._single(terms[0], mask)
        else:
            pruned = self._pruned(terms, k, mask)
            found, scores = (
                pruned if pruned is not None else self._summed(self._shares(terms, mask))
            )
        if found.shape[0] > k:
            pick = (-scores).argpartition(k - 1)[:k]
            kth = scores[pick].min()
            if np.count_nonzero(scores == kth) > np.count_nonzero(scores[pick] == kth):
                # ties cut at the k-th score: keep the lowest ids
                above = np.flatnonzero(scores > kth)
                tied = np.flatnonzero(scores == kth)
                tied = tied[found[tied].argsort()[: k - above.shape[0]]]
                pick = np.concatenate([above, tied])
            found, scores = found[pick], scores[pick]
        order = np.lexsort((found, -scores))
        return list(zip(found[order].tolist(), scores[order].tolist(), strict=True))

    def _single(
        self, term: tuple[array[int], int, float], mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`matching` of one term, its ids in posting order (not sorted): a posting
        holds a document once, so each pair's share is its score, with nothing to sum."""
        shares = self._shares([term], mask)
        return shares if shares is not None else self._summed(None)

    def _pruned(
        self, terms: list[tuple[array[int], int, float]], k: int, mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`matching`'s ids and scores of every document that can be among the ``k``
        best, when the common terms' postings can be skipped for the others (see the
        module); None when that cannot be shown (then every posting is read)."""
        if len(terms) < 2:
            return None
        total = common = sum(df for _, df, _ in terms)
        if total < self.prune_min_entries:
            return None
        by_idf = sorted(range(len(terms)), key=lambda i: terms[i][2])  # commonest first
        sizes = [terms[i][1] for i in by_idf]
        for split in range(len(terms) - 1, 0, -1):  # common terms: by_idf[:split]
            common -= sizes[split]
            if common < max(self.prune_ratio * (total - common), self.prune_min_entries):
                return None  # skipping what is left saves about what trying costs
            rare = [terms[i] for i in sorted(by_idf[split:])]  # in query order
            found, partial = self._summed(self._shares(rare, mask))
            if found.shape[0] < k:
                continue  # fewer rare matches than k: a common-only one may get in
            floor = np.partition(partial, found.shape[0] - k)[found.shape[0] - k]
            ceiling = sum(terms[i][2] for i in by_idf[:split]) * (self.k1 + 1.0)
            if ceiling * _BOUND_MARGIN < floor:
                # a full score is never below its partial one: the k-th best is >= floor,
                # and a document with common terms only scores <= ceiling
                candidates = np.zeros(self._size, dtype=bool)
                candidates[found] = True
                self.pruned += 1
                return self._summed(self._shares(terms, candidates))
        return None
