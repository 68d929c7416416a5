"""The labelled query set: recall@5 per mode with the deterministic embedder."""

from __future__ import annotations

from pathlib import Path

from beamclaw_memory import EvalSet, IndexedMemory, SearchMode, load_into, recall_at_k

DATA = Path(__file__).parent / "data" / "eval.json"


def test_the_query_set_is_well_formed() -> None:
    evalset = EvalSet.load(DATA)
    ids = {d.id for d in evalset.documents}
    assert len(ids) == len(evalset.documents) >= 30
    assert len(evalset.queries) >= 20
    assert all(set(q.relevant) <= ids for q in evalset.queries)
    assert sum(not d.text.isascii() for d in evalset.documents) >= 8


async def test_recall_at_5_per_mode(service: IndexedMemory) -> None:
    evalset = EvalSet.load(DATA)
    await load_into(service, "eval", evalset)
    keyword = await recall_at_k(service, "eval", evalset, SearchMode.KEYWORD)
    semantic = await recall_at_k(service, "eval", evalset, SearchMode.SEMANTIC)
    hybrid = await recall_at_k(service, "eval", evalset, SearchMode.HYBRID)
    # floors a regression would break (measured values are in docs/memory.md)
    assert keyword >= 0.8
    assert semantic >= 0.6
    assert hybrid >= max(keyword, semantic) - 0.05
