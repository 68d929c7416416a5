"""Memory search: recall@5 per mode on the labelled set, latency at 10k chunks, BM25 engines.

* Recall@5 for keyword, semantic and hybrid (weighted and RRF fusion) on the labelled set
  shipped with the tests (``packages/beamclaw-memory/tests/data/eval.json``), with the
  deterministic :class:`HashingEmbedder` standing in for an embedding model; and the
  recall@k of auto-context's injection (what a turn is shown, under the default limit,
  token budget and deadline) on the same set.
* Search latency p50/p95 at 10,000 chunks through the real service (in-memory and SQL on
  SQLite), per mode; the query embedding comes from the cache after the first round.
* The keyword engine choice: the incremental numpy BM25 BeamClaw uses vs ``bm25s`` (the
  baseline, a static sparse index) vs SQLite FTS5 on the same tokens: build time, query
  p50/p95 and the cost of "one write then one search" (the agent's per-turn pattern).
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from beamclaw_core.sessions.memory_context import AutoContext
from beamclaw_memory import (
    Database,
    EvalSet,
    IndexedMemory,
    MemoryService,
    MemorySettings,
    SearchMode,
    SearchSettings,
    create_memory_service,
    load_into,
    recall_at_k,
)
from beamclaw_memory.search import BM25Index, Tokenizer
from beamclaw_memory.testing import HashingEmbedder
from bench.common import max_rss_mb, median, percentile

EVAL = Path(__file__).parent.parent / "packages/beamclaw-memory/tests/data/eval.json"
CHUNKS = 10_000
QUERIES = 200
ROUNDS = 5


class _MemoEmbedder:
    """HashingEmbedder with a text memo, so corpus setup is paid once per run."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(256)
        self._memo: dict[str, np.ndarray] = {}

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def dimensions(self) -> int | None:
        return self._inner.dimensions

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for t in texts:
            v = self._memo.get(t)
            if v is None:
                v = self._memo[t] = self._inner.vector(t)
            out.append(v)
        return out

    async def aclose(self) -> None:
        return None


def _corpus(seed: int = 7) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyzéöжд"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(20_000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    docs = [" ".join(rng.choices(vocab, weights, k=60)) for _ in range(CHUNKS)]
    queries = [" ".join(rng.sample(docs[rng.randrange(CHUNKS)].split(), 4)) for _ in range(QUERIES)]
    return docs, queries


async def _recall() -> dict[str, float]:
    evalset = EvalSet.load(EVAL)
    out: dict[str, float] = {}
    for fusion in ("weighted", "rrf"):
        memory = create_memory_service(
            MemorySettings(backend="memory", search=SearchSettings(fusion=fusion)),
            None,
            embedder=HashingEmbedder(),
        )
        await load_into(memory, "eval", evalset)
        if fusion == "weighted":
            out["recall@5_keyword"] = await recall_at_k(memory, "eval", evalset, SearchMode.KEYWORD)
            out["recall@5_semantic"] = await recall_at_k(
                memory, "eval", evalset, SearchMode.SEMANTIC
            )
        out[f"recall@5_hybrid_{fusion}"] = await recall_at_k(
            memory, "eval", evalset, SearchMode.HYBRID
        )
        if fusion == "weighted":
            out.update(await _injection_recall(memory, evalset))
        await memory.aclose()
    return {k: round(v, 3) for k, v in out.items()}


async def _injection_recall(memory: MemoryService, evalset: EvalSet) -> dict[str, float]:
    """Recall@k of what auto-context injects into a turn with the default ``[memory]``
    limit, token budget and deadline (k = ``auto_context_limit``): the hits a turn whose
    user message is the query is shown, not merely what the search ranks."""
    cfg = MemorySettings()
    auto = AutoContext(
        memory,
        cfg.auto_context_limit,
        max_tokens=cfg.auto_context_max_tokens,
        deadline_seconds=cfg.auto_context_deadline_ms / 1000,
    )
    total = 0.0
    for q in evalset.queries:
        shown = {h.key for h in await auto.injected("bench", "eval", q.query)}
        total += len(shown & set(q.relevant)) / len(q.relevant)
    await auto.drain(1.0)
    return {
        f"recall@{cfg.auto_context_limit}_auto_context_injection": total / len(evalset.queries),
        "auto_context_skipped": float(auto.skipped),
    }


async def _latency(memory: IndexedMemory, queries: list[str], label: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for mode in SearchMode:
        for q in queries[:20]:  # warm: index sync, array caches, query-vector cache
            await memory.search("bench", q, mode=mode)
        samples: list[float] = []
        for q in queries:
            t = time.perf_counter()
            await memory.search("bench", q, mode=mode)
            samples.append((time.perf_counter() - t) * 1000)
        out[f"{label}_{mode.value}_p50_ms"] = round(percentile(samples, 50), 3)
        out[f"{label}_{mode.value}_p95_ms"] = round(percentile(samples, 95), 3)
    return out


async def _service_latency(docs: list[str], queries: list[str]) -> dict[str, float]:
    embedder = _MemoEmbedder()
    messages = [("bench", i, "note", d) for i, d in enumerate(docs)]
    out: dict[str, float] = {}
    memory = create_memory_service(MemorySettings(backend="memory"), None, embedder=embedder)
    t = time.perf_counter()
    await memory.index_transcript("bench", messages)
    await memory.search("bench", "warm")
    out["in_memory_index_10k_s"] = round(time.perf_counter() - t, 2)
    out.update(await _latency(memory, queries, "in_memory"))
    await memory.aclose()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/bench.db")
        await db.migrate()
        sql = create_memory_service(MemorySettings(backend="sql"), db, embedder=embedder)
        t = time.perf_counter()
        await sql.index_transcript("bench", messages)
        out["sqlite_index_10k_s"] = round(time.perf_counter() - t, 2)
        # a fresh process: the first search loads 10k rows (with vectors) into the index
        cold = create_memory_service(MemorySettings(backend="sql"), db, embedder=embedder)
        t = time.perf_counter()
        await cold.search("bench", "warm")
        out["sqlite_cold_load_10k_s"] = round(time.perf_counter() - t, 2)
        out.update(await _latency(cold, queries, "sqlite"))
        await sql.aclose()
        await cold.aclose()
        await db.dispose()
    return out


def _engines(docs: list[str], queries: list[str]) -> dict[str, Any]:
    tok = Tokenizer(("en",))
    doc_tokens = [tok(d) for d in docs]
    query_tokens = [tok(q) for q in queries]
    out: dict[str, Any] = {}

    def build_ours() -> BM25Index:
        index = BM25Index()
        for i, toks in enumerate(doc_tokens):
            index.add(i, toks)
        return index

    def build_bm25s() -> bm25s.BM25:
        engine = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        engine.index(doc_tokens, show_progress=False)
        return engine

    def build_fts() -> sqlite3.Connection:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE f USING fts5(body, tokenize='unicode61')")
        con.executemany(
            "INSERT INTO f(rowid, body) VALUES (?, ?)",
            [(i, " ".join(t)) for i, t in enumerate(doc_tokens)],
        )
        con.commit()
        return con

    builds: dict[str, list[float]] = {"ours": [], "bm25s": [], "fts5": []}
    for _ in range(3):
        for name, fn in (("ours", build_ours), ("bm25s", build_bm25s), ("fts5", build_fts)):
            t = time.perf_counter()
            fn()
            builds[name].append(time.perf_counter() - t)
    ours, engine, con = build_ours(), build_bm25s(), build_fts()

    def q_ours(q: list[str]) -> None:
        ours.top(q, 20)

    def q_bm25s(q: list[str]) -> None:
        scores = engine.get_scores(q)
        np.argpartition(-scores, 20)[:20]

    def q_fts(q: list[str]) -> None:
        expr = " OR ".join(f'"{w}"' for w in q)
        con.execute(
            "SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 20", (expr,)
        ).fetchall()

    for name, fn in (("ours", q_ours), ("bm25s", q_bm25s), ("fts5", q_fts)):
        samples: list[float] = []
        for q in query_tokens:
            if not q:
                continue
            t = time.perf_counter()
            fn(q)
            samples.append((time.perf_counter() - t) * 1000)
        out[f"bm25_{name}_build_10k_s"] = round(median(builds[name]), 3)
        out[f"bm25_{name}_query_p50_ms"] = round(percentile(samples, 50), 3)
        out[f"bm25_{name}_query_p95_ms"] = round(percentile(samples, 95), 3)

    # the per-turn pattern: one new chunk, then one search
    cycles: dict[str, list[float]] = {"ours": [], "bm25s": [], "fts5": []}
    for r in range(ROUNDS):
        new = doc_tokens[r]
        t = time.perf_counter()
        ours.add(CHUNKS + r, new)
        q_ours(query_tokens[r])
        cycles["ours"].append(time.perf_counter() - t)
        t = time.perf_counter()
        engine.index([*doc_tokens, new], show_progress=False)  # bm25s cannot add one doc
        q_bm25s(query_tokens[r])
        cycles["bm25s"].append(time.perf_counter() - t)
        t = time.perf_counter()
        con.execute("INSERT INTO f(rowid, body) VALUES (?, ?)", (CHUNKS + r, " ".join(new)))
        con.commit()
        q_fts(query_tokens[r])
        cycles["fts5"].append(time.perf_counter() - t)
    base = median(cycles["bm25s"])
    for name, values in cycles.items():
        out[f"bm25_{name}_write_then_search_ms"] = round(median(values) * 1000, 3)
        out[f"bm25_{name}_write_then_search_vs_bm25s"] = round(median(values) / base, 4)
    return out


async def run() -> dict[str, Any]:
    docs, queries = _corpus()
    result: dict[str, Any] = {"chunks": CHUNKS, "queries": QUERIES}
    result.update(await _recall())
    result.update(await _service_latency(docs, queries))
    result.update(_engines(docs, queries))
    result["peak_rss_mb"] = round(max_rss_mb(), 1)
    return result
