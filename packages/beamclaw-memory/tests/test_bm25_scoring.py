"""BM25 scoring equals the textbook formula summed term by term, bit for bit.

The reference is the Okapi formula in plain Python floats over a dict of live documents,
each query term's share added in query order (how the index summed before it scored all
query terms' postings in one ``np.bincount``, and, when few documents match, the matches
only); the top ``k`` are the first ``k`` by ``(-score, id)`` (of the documents tied at the
``k``-th score, the lowest ids), whether or not the index skipped the common terms'
postings (``always_try`` makes it try on every search). Any difference in hits, order
or score bits fails: compared with ``==``, not ``approx``.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_memory.search import BM25Index

Docs = dict[int, list[str]]


def reference_scores(docs: Docs, query: list[str], k1: float, b: float) -> dict[int, float]:
    if not docs:
        return {}
    avgdl = sum(len(t) for t in docs.values()) / len(docs) or 1.0
    out: dict[int, float] = {}
    for term in dict.fromkeys(query):
        having = {d: t.count(term) for d, t in docs.items() if term in t}
        n = len(having)
        idf = math.log(1.0 + (len(docs) - n + 0.5) / (n + 0.5))
        for d, tf in having.items():
            denom = tf + k1 * (1.0 - b + b * len(docs[d]) / avgdl)
            out[d] = out.get(d, 0.0) + idf * tf * (k1 + 1.0) / denom
    return out


def reference_top(
    docs: Docs, query: list[str], k: int, mask: np.ndarray | None, k1: float, b: float
) -> list[tuple[int, float]]:
    scores = reference_scores(docs, query, k1, b)
    ids = [d for d in scores if mask is None or (d < mask.shape[0] and bool(mask[d]))]
    return sorted(((d, scores[d]) for d in ids), key=lambda p: (-p[1], p[0]))[:k]


_WORDS = st.sampled_from(["tea", "coffee", "beagle", "harbour", "mai", "rue", "x", "y"])
_DOC_ID = st.integers(0, 30) | st.integers(0, 6_000)
"""Few ids close together (the dense sum) or far apart (the sparse one)."""
_OPS = st.lists(
    st.tuples(_DOC_ID, st.none() | st.lists(_WORDS, min_size=1, max_size=8)),
    max_size=80,
)
_QUERY = st.lists(_WORDS | st.just("absent"), min_size=1, max_size=9)


def _replay(
    ops: list[tuple[int, list[str] | None]], k1: float, b: float, *, always_try: bool = False
) -> tuple[BM25Index, Docs]:
    """The index after ``ops``; ``always_try``: it tries to skip common postings on every
    search (else only where ``PRUNE_RATIO`` and ``PRUNE_MIN_ENTRIES`` say)."""
    index = (
        BM25Index(k1=k1, b=b, prune_ratio=0.0, prune_min_entries=0)
        if always_try
        else BM25Index(k1=k1, b=b)
    )
    docs: Docs = {}
    for doc_id, tokens in ops:
        if tokens is None:
            index.remove(doc_id)
            docs.pop(doc_id, None)
        else:
            index.add(doc_id, tokens)
            docs[doc_id] = tokens
    return index, docs


@settings(max_examples=200, deadline=None)
@given(
    ops=_OPS,
    query=_QUERY,
    k=st.integers(1, 12),
    mask_bits=st.none() | st.lists(st.booleans(), max_size=60),
    k1=st.sampled_from([1.2, 0.9, 2.0]),
    b=st.sampled_from([0.75, 0.0, 1.0]),
    always_try=st.booleans(),
)
def test_top_and_scores_equal_the_formula_bit_for_bit(
    ops: list[tuple[int, list[str] | None]],
    query: list[str],
    k: int,
    mask_bits: list[bool] | None,
    k1: float,
    b: float,
    always_try: bool,
) -> None:
    index, docs = _replay(ops, k1, b, always_try=always_try)
    mask = np.array(mask_bits, dtype=bool) if mask_bits is not None else None
    expected = reference_scores(docs, query, k1, b)
    assert index.scores(query) == expected
    dense = index.score_array(query)
    assert {int(i): float(dense[i]) for i in np.flatnonzero(dense)} == expected
    assert index.top(query, k, mask) == reference_top(docs, query, k, mask, k1, b)


def test_a_few_matches_among_far_apart_ids_score_as_the_formula() -> None:
    """Postings far sparser than the id range: summed over the matches alone."""
    ops: list[tuple[int, list[str] | None]] = [
        (1_000_000, ["tea", "harbour", "tea"]),
        (3, ["tea", "coffee"]),
        (500_000, ["coffee", "rue"]),
        (7, ["beagle"]),
    ]
    index, docs = _replay(ops, 1.2, 0.75)
    query = ["tea", "coffee", "tea"]
    assert index.scores(query) == reference_scores(docs, query, 1.2, 0.75)
    assert index.top(query, 2) == reference_top(docs, query, 2, None, 1.2, 0.75)
    mask = np.zeros(600_000, dtype=bool)
    mask[[3, 500_000]] = True  # 1_000_000 lies past the mask: not allowed
    assert [d for d, _ in index.top(query, 5, mask)] == [3, 500_000]


def test_ties_at_the_kth_score_keep_the_lowest_ids() -> None:
    """Many equal scores around the ``k``-th: the lowest ids are kept, in id order."""
    index, docs = _replay([(d, ["tea", f"w{d}"]) for d in range(0, 400, 3)], 1.2, 0.75)
    for k in (1, 5, 12, 200):
        top = index.top(["tea"], k)
        assert top == reference_top(docs, ["tea"], k, None, 1.2, 0.75)
        assert [d for d, _ in top] == sorted(d for d, _ in top)  # equal scores: by id


def test_a_one_word_query_keeps_the_lowest_tied_ids_whatever_its_posting_order() -> None:
    """One query term is scored without summing, its ids in posting order (added last to
    first here, then shuffled by removals): ties still keep the lowest ids."""
    ops: list[tuple[int, list[str] | None]] = [(d, ["tea", f"w{d}"]) for d in range(400, 0, -1)]
    ops += [(d, None) for d in range(390, 0, -7)]
    index, docs = _replay(ops, 1.2, 0.75)
    for k in (1, 5, 12, 200):
        mask = np.ones(401, dtype=bool)
        mask[::5] = False
        for m in (None, mask):
            top = index.top(["tea"], k, m)
            assert top == reference_top(docs, ["tea"], k, m, 1.2, 0.75)


_COMMON = st.lists(st.sampled_from(["the", "a", "tea"]), min_size=1, max_size=6)
_RARE = st.lists(st.sampled_from(["beagle", "harbour", "mai", "rue"]), max_size=2)


@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(st.tuples(_COMMON, _RARE), min_size=1, max_size=120),
    query=st.lists(st.sampled_from(["the", "a", "tea", "beagle", "harbour", "rue"]), min_size=2),
    k=st.integers(1, 8),
    mask_every=st.sampled_from([None, 2, 3]),
)
def test_skipping_the_common_postings_changes_nothing(
    docs: list[tuple[list[str], list[str]]],
    query: list[str],
    k: int,
    mask_every: int | None,
) -> None:
    """Common words in every document, rare ones in a few: the searches that skip the
    common postings (counted) give the reference's hits and score bits."""
    ops: list[tuple[int, list[str] | None]] = [(d, c + r) for d, (c, r) in enumerate(docs)]
    index, kept = _replay(ops, 1.2, 0.75, always_try=True)
    mask = None
    if mask_every is not None:
        mask = np.zeros(len(docs), dtype=bool)
        mask[::mask_every] = True
    assert index.top(query, k, mask) == reference_top(kept, query, k, mask, 1.2, 0.75)


def test_a_common_term_is_read_only_for_the_rare_terms_matches() -> None:
    """A word in every one of 40,000 documents and a rare one in 800: the 5 best are the
    rare word's, found without scoring the common posting for the other 39,200; on a
    small index the same search reads every posting (the attempt would cost more)."""
    ops: list[tuple[int, list[str] | None]] = [
        (d, ["tea", "tea", *(["beagle"] if d % 50 == 0 else []), f"w{d % 7}"])
        for d in range(40_000)
    ]
    index, docs = _replay(ops, 1.2, 0.75)
    query = ["tea", "beagle"]
    top = index.top(query, 5)
    assert index.pruned == 1
    assert top == reference_top(docs, query, 5, None, 1.2, 0.75)
    assert all(d % 50 == 0 for d, _ in top)
    assert index.top(["tea"], 5) == reference_top(docs, ["tea"], 5, None, 1.2, 0.75)
    assert index.pruned == 1, "one term: nothing to skip"
    small, _ = _replay(ops[:2_000], 1.2, 0.75)
    small.top(query, 5)
    assert small.pruned == 0
