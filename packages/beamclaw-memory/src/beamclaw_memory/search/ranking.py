"""From retriever candidates to the final ranked list: fusion, decay, threshold, MMR.

Scores in the returned list lie in ``[0, 1]``:

* keyword mode: BM25 divided by the best BM25 of the candidates;
* semantic mode: cosine similarity (negative similarities count as 0);
* hybrid mode: weighted min-max fusion or reciprocal-rank fusion (``[memory.search]``).

Then temporal decay multiplies the scores of dated categories, ``min_score`` drops weak
hits, MMR (when enabled) re-orders for diversity and the list is cut to ``limit``.
"""

from __future__ import annotations

import numpy as np

from beamclaw_memory.search.fusion import (
    Ranked,
    decay_factor,
    jaccard,
    max_normalised,
    mmr,
    rrf_fusion,
    weighted_fusion,
)
from beamclaw_memory.search.index import AgentIndex
from beamclaw_memory.service import MemoryCategory, SearchMode
from beamclaw_memory.settings import SearchSettings


def fuse(
    mode: SearchMode, keyword: Ranked, vector: Ranked, cfg: SearchSettings
) -> dict[int, float]:
    """Scores in ``[0, 1]`` of every candidate for ``mode``."""
    if mode is SearchMode.KEYWORD:
        return max_normalised(keyword)
    if mode is SearchMode.SEMANTIC:
        return {d: min(1.0, max(0.0, s)) for d, s in vector}
    if cfg.fusion == "rrf":
        return rrf_fusion(vector, keyword, cfg.vector_weight, cfg.keyword_weight, cfg.rrf_k)
    return weighted_fusion(vector, keyword, cfg.vector_weight, cfg.keyword_weight)


def rank(
    index: AgentIndex,
    mode: SearchMode,
    keyword: Ranked,
    vector: Ranked,
    cfg: SearchSettings,
    *,
    now: float,
    limit: int,
) -> list[tuple[int, float]]:
    """The final ``(slot, score)`` list, best first."""
    scores = fuse(mode, keyword, vector, cfg)
    decay = cfg.temporal_decay
    if decay.enabled:
        decaying = {MemoryCategory(c) for c in decay.categories}
        for slot, score in scores.items():
            if index.category(slot) in decaying:
                age = now - index.created_at(slot)
                scores[slot] = score * decay_factor(age, decay.half_life_days)
    ranked = sorted(
        ((s, v) for s, v in scores.items() if v >= cfg.min_score and v > 0.0),
        key=lambda p: (-p[1], index.key(p[0])),
    )
    if cfg.mmr.enabled and len(ranked) > 1:

        def similarity(a: int, b: int) -> float:
            va, vb = index.vectors.get(a), index.vectors.get(b)
            if va is not None and vb is not None:
                return float(np.dot(va, vb))
            return jaccard(index.terms(a), index.terms(b))

        return mmr(ranked, similarity, cfg.mmr.lambda_, limit)
    return ranked[:limit]
