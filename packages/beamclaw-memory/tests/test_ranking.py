"""BM25 and fusion: scoring on non-ASCII text, min-max and RRF fusion, decay and MMR."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_memory.search import (
    BM25Index,
    Tokenizer,
    VectorTable,
    decay_factor,
    min_max,
    mmr,
    rrf_fusion,
    weighted_fusion,
)

DOCS = [
    "Бабушка живёт в Москве и звонит каждое воскресенье",
    "Рецепт борща: свёкла, капуста, картофель",
    "来月、東京の渋谷で友達と会う予定です",
    "Crème brûlée from the bistro on Rue Cler",
    "Die Steuererklärung muss bis Ende Mai eingereicht werden",
    "The beagle is called Bruno",
]


def build() -> tuple[BM25Index, Tokenizer]:
    tok = Tokenizer(("en",))
    index = BM25Index()
    for i, doc in enumerate(DOCS):
        index.add(i, tok(doc))
    return index, tok


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("бабушка воскресенье", 0),
        ("борща свёкла", 1),
        ("東京 渋谷", 2),
        ("creme brulee", 3),
        ("Steuererklärung", 4),
        ("beagle", 5),
    ],
)
def test_bm25_ranks_the_right_non_ascii_document_first(query: str, expected: int) -> None:
    index, tok = build()
    top = index.top(tok(query), 3)
    assert top[0][0] == expected
    assert all(score > 0 for _, score in top)


def test_bm25_scores_match_the_formula() -> None:
    index = BM25Index(k1=1.2, b=0.75)
    index.add(0, ["a", "b", "b"])
    index.add(1, ["a", "c"])
    avgdl = 2.5
    idf_b = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    expected = idf_b * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / avgdl))
    assert index.scores(["b"]) == {0: pytest.approx(expected)}


def test_bm25_incremental_add_remove_equals_rebuild() -> None:
    tok = Tokenizer(())
    incremental = BM25Index()
    for i, doc in enumerate(DOCS):
        incremental.add(i, tok(doc))
    incremental.top(tok("beagle Москве"), 5)  # warm the array caches
    incremental.remove(0)
    incremental.add(5, tok("A beagle lives in Москве now"))
    fresh = BM25Index()
    for i, doc in enumerate(DOCS[1:5], start=1):
        fresh.add(i, tok(doc))
    fresh.add(5, tok("A beagle lives in Москве now"))
    query = tok("beagle Москве")
    assert incremental.scores(query) == pytest.approx(fresh.scores(query))
    assert [d for d, _ in incremental.top(query, 5)] == [d for d, _ in fresh.top(query, 5)]
    assert 0 not in incremental
    assert incremental.top(tok("бабушка"), 5) == []


def test_bm25_mask_restricts_candidates() -> None:
    index, tok = build()
    mask = np.zeros(len(DOCS), dtype=bool)
    mask[4] = True
    assert index.top(tok("beagle"), 5, mask) == []


def test_min_max_and_weighted_fusion() -> None:
    assert min_max([(1, 5.0), (2, 3.0), (3, 1.0)]) == {1: 1.0, 2: 0.5, 3: 0.0}
    assert min_max([(7, 0.3)]) == {7: 1.0}
    fused = weighted_fusion([(1, 0.9), (2, 0.1)], [(2, 12.0), (3, 2.0)], 0.7, 0.3)
    assert fused == pytest.approx({1: 0.7, 2: 0.3, 3: 0.0})


def test_rrf_fusion_prefers_agreement_and_is_scaled_to_one() -> None:
    fused = rrf_fusion([(1, 0.9), (2, 0.8)], [(1, 3.0), (3, 1.0)], 0.7, 0.3, k=60)
    assert fused[1] == pytest.approx(1.0)
    assert fused[2] > fused[3]  # rank 2 in the heavier list beats rank 2 in the lighter


def test_decay_halves_at_half_life() -> None:
    assert decay_factor(30 * 86400, 30) == pytest.approx(0.5)
    assert decay_factor(-5, 30) == 1.0


def test_mmr_demotes_near_duplicates() -> None:
    table = VectorTable()
    table.put(0, np.array([1.0, 0.0]))
    table.put(1, np.array([0.99, 0.05]))
    table.put(2, np.array([0.0, 1.0]))

    def sim(a: int, b: int) -> float:
        va, vb = table.get(a), table.get(b)
        assert va is not None and vb is not None
        return float(va @ vb)

    ranked = [(0, 1.0), (1, 0.95), (2, 0.6)]
    assert [d for d, _ in mmr(ranked, sim, 1.0, 3)] == [0, 1, 2]
    assert [d for d, _ in mmr(ranked, sim, 0.5, 3)] == [0, 2, 1]


def test_vector_table_dimension_mismatch_is_a_value_error() -> None:
    table = VectorTable()
    table.put(0, np.ones(4))
    with pytest.raises(ValueError, match="dimensions"):
        table.put(1, np.ones(8))
    with pytest.raises(ValueError, match="dimensions"):
        table.top(np.ones(8), 1)


_WORDS = st.sampled_from(["tea", "coffee", "beagle", "harbour", "mai", "rue", "x"])
_OPS = st.lists(
    st.tuples(st.integers(0, 40), st.none() | st.lists(_WORDS, min_size=1, max_size=6)),
    max_size=120,
)


@settings(max_examples=60, deadline=None)
@given(ops=_OPS, query=st.lists(_WORDS, min_size=1, max_size=3))
def test_bm25_scores_after_any_adds_and_removes_equal_a_fresh_index(
    ops: list[tuple[int, list[str] | None]], query: list[str]
) -> None:
    """Appended postings, removed entries kept as holes, compaction: none shows in scores
    (a removal is ``None``; every search in between must see the same as a rebuild)."""
    incremental = BM25Index()
    live: dict[int, list[str]] = {}
    for n, (doc_id, tokens) in enumerate(ops):
        if tokens is None:
            incremental.remove(doc_id)
            live.pop(doc_id, None)
        else:
            incremental.add(doc_id, tokens)
            live[doc_id] = tokens
        if n % 7 == 0:
            incremental.top(query, 3)
    fresh = BM25Index()
    for doc_id, tokens in live.items():
        fresh.add(doc_id, tokens)
    assert incremental.scores(query) == pytest.approx(fresh.scores(query))
    assert len(incremental) == len(live)
    assert [d for d, _ in incremental.top(query, 5)] == [d for d, _ in fresh.top(query, 5)]


def test_bm25_removals_after_a_compaction_remove_the_right_documents() -> None:
    index = BM25Index()
    for doc_id in range(20):
        index.add(doc_id, ["tea", f"w{doc_id}"])
    for doc_id in range(11):  # more than half removed: the postings are compacted
        index.remove(doc_id)
    index.remove(15)
    index.add(3, ["tea"])
    assert sorted(index.scores(["tea"])) == [3, 11, 12, 13, 14, 16, 17, 18, 19]
