"""Retrieval evaluation: a labelled query set and recall@k over a memory service.

The set is JSON: ``{"documents": [{"id", "text"}], "queries": [{"query", "relevant":
[ids]}]}``. Documents are stored as entries keyed by their id (category ``custom``), so a
hit's key is the document id. Used by the tests and by ``bench/memory.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from beamclaw_memory.service import MemoryCategory, MemoryService, SearchMode


class EvalDocument(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    text: str


class EvalQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    query: str
    relevant: tuple[str, ...]


class EvalSet(BaseModel):
    """A fixed labelled query set."""

    model_config = ConfigDict(frozen=True)

    documents: tuple[EvalDocument, ...]
    queries: tuple[EvalQuery, ...]

    @classmethod
    def load(cls, path: Path) -> EvalSet:
        return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))


async def load_into(memory: MemoryService, agent_id: str, evalset: EvalSet) -> None:
    """Store every document of ``evalset`` for ``agent_id``."""
    for doc in evalset.documents:
        await memory.store(agent_id, doc.id, doc.text, MemoryCategory.CUSTOM)


async def recall_at_k(
    memory: MemoryService, agent_id: str, evalset: EvalSet, mode: SearchMode, k: int = 5
) -> float:
    """Mean over queries of |relevant ∩ top-k| / |relevant|."""
    total = 0.0
    for q in evalset.queries:
        result = await memory.search(agent_id, q.query, mode=mode, limit=k)
        found = {h.key for h in result.hits[:k]}
        total += len(found & set(q.relevant)) / len(q.relevant)
    return total / len(evalset.queries)
