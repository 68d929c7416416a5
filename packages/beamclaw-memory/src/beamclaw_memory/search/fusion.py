"""Pure ranking functions: score normalisation, hybrid fusion, temporal decay, MMR.

Every function takes ranked lists of ``(doc_id, score)`` and returns plain values; none
does I/O or reads a clock, so each is tested by value. Fused scores lie in ``[0, 1]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

Ranked = Sequence[tuple[int, float]]
"""A ranked list of ``(doc_id, score)``, best first."""


def min_max(ranked: Ranked) -> dict[int, float]:
    """Scores rescaled to ``[0, 1]`` by the list's min and max.

    When every score is equal (including a single hit) each becomes ``1.0``: the list holds
    no information about relative quality, and the hit did match.
    """
    if not ranked:
        return {}
    values = [s for _, s in ranked]
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return {d: 1.0 for d, _ in ranked}
    return {d: (s - lo) / (hi - lo) for d, s in ranked}


def weighted_fusion(
    vector: Ranked, keyword: Ranked, vector_weight: float, keyword_weight: float
) -> dict[int, float]:
    """``(wv * minmax(vector) + wk * minmax(keyword)) / (wv + wk)`` over the union.

    A document missing from one list contributes 0 from that list.
    """
    total = vector_weight + keyword_weight
    if total <= 0:
        raise ValueError("fusion weights must not both be zero")
    v, k = min_max(vector), min_max(keyword)
    return {
        d: (vector_weight * v.get(d, 0.0) + keyword_weight * k.get(d, 0.0)) / total
        for d in v.keys() | k.keys()
    }


def rrf_fusion(
    vector: Ranked,
    keyword: Ranked,
    vector_weight: float,
    keyword_weight: float,
    k: int = 60,
) -> dict[int, float]:
    """Weighted reciprocal-rank fusion: ``sum w / (k + rank)``, rank from 1.

    Scaled so that a document ranked first in both lists scores exactly ``1.0``.
    """
    total = vector_weight + keyword_weight
    if total <= 0:
        raise ValueError("fusion weights must not both be zero")
    out: dict[int, float] = {}
    for weight, ranked in ((vector_weight, vector), (keyword_weight, keyword)):
        for rank, (doc, _) in enumerate(ranked, start=1):
            out[doc] = out.get(doc, 0.0) + weight / (k + rank)
    best = total / (k + 1)
    return {d: s / best for d, s in out.items()}


def max_normalised(ranked: Ranked) -> dict[int, float]:
    """Scores divided by the best one (the best becomes ``1.0``; order kept)."""
    if not ranked:
        return {}
    top = max(s for _, s in ranked)
    if top <= 0:
        return {d: 0.0 for d, _ in ranked}
    return {d: s / top for d, s in ranked}


def decay_factor(age_seconds: float, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``; 1.0 for non-positive ages or half-lives."""
    if age_seconds <= 0 or half_life_days <= 0:
        return 1.0
    return math.pow(0.5, age_seconds / (half_life_days * 86400.0))


def mmr(
    ranked: Ranked,
    similarity: Callable[[int, int], float],
    lambda_: float,
    k: int,
) -> list[tuple[int, float]]:
    """Maximal marginal relevance: re-order ``ranked`` for relevance *and* diversity.

    Picks, ``k`` times, the document maximising
    ``lambda * relevance - (1 - lambda) * max similarity to those already picked``.
    Relevance is the given score; returned pairs keep their original scores.
    """
    remaining = list(ranked)
    chosen: list[tuple[int, float]] = []
    while remaining and len(chosen) < k:
        best_i, best_val = 0, -math.inf
        for i, (doc, score) in enumerate(remaining):
            penalty = max((similarity(doc, c) for c, _ in chosen), default=0.0)
            value = lambda_ * score - (1.0 - lambda_) * penalty
            if value > best_val:
                best_i, best_val = i, value
        chosen.append(remaining.pop(best_i))
    return chosen


def jaccard(a: frozenset[Hashable], b: frozenset[Hashable]) -> float:
    """Token-set overlap, MMR's similarity when no vectors are available."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
