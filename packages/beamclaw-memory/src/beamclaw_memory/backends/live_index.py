"""Each agent's in-process search index, kept in step with the row store.

Invariants:

* Every write and delete goes through :class:`LiveIndexes`: the rows change in the store
  and, under the agent's lock, in its index (when one is built), and the index's
  signature is cleared so the next :meth:`~LiveIndexes.synced` checks the store again.
* :meth:`~LiveIndexes.synced` reconciles the index with the store first — a signature
  query, and a per-key version diff when it differs — so rows written by another
  process on the same database are found.
* An agent's index is built by its first :meth:`~LiveIndexes.synced` (the first search),
  never before: writes to an agent without one only reach the store. numpy (and bm25s's
  stopword lists) are imported then, with :mod:`beamclaw_memory.search.index`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from beamclaw_memory.backends.rows import MemoryRow, RowStore
from beamclaw_memory.search.tokenizer import Tokenizer

if TYPE_CHECKING:
    from beamclaw_memory.search.index import AgentIndex


class LiveIndexes:
    """The per-agent :class:`AgentIndex` cache over ``rows`` (vectors of ``model``)."""

    def __init__(self, rows: RowStore, tokenizer: Tokenizer, model: str | None) -> None:
        self.rows = rows
        self._tokenizer = tokenizer
        self._model = model
        self._indexes: dict[str, AgentIndex] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def _lock(self, agent_id: str) -> asyncio.Lock:
        lock = self._locks.get(agent_id)
        if lock is None:
            lock = self._locks[agent_id] = asyncio.Lock()
        return lock

    async def synced(self, agent_id: str) -> AgentIndex:
        """The agent's index, reconciled with the row store."""
        async with self._lock(agent_id):
            index = self._indexes.get(agent_id)
            if index is None:
                from beamclaw_memory.search.index import AgentIndex  # numpy: the first search

                index = self._indexes[agent_id] = AgentIndex(self._tokenizer)
                index.reset_vectors(self._model)
            signature = await self.rows.signature(agent_id)
            if signature != index.signature:
                versions = await self.rows.versions(agent_id)
                for key in [k for k in index.versions if k not in versions]:
                    index.remove(key)
                changed = [k for k, v in versions.items() if index.versions.get(k) != v]
                for row in await self.rows.fetch(agent_id, changed):
                    index.apply(row)
                index.signature = signature
            return index

    async def write(self, agent_id: str, rows: Sequence[MemoryRow]) -> None:
        """Upsert ``rows`` and apply them (with their new versions) to the index."""
        async with self._lock(agent_id):
            changed = await self.rows.upsert(agent_id, rows)
            index = self._indexes.get(agent_id)
            if index is not None:
                for row in rows:
                    index.apply(replace(row, changed_at=changed[row.key]))
                index.signature = None

    async def delete(self, agent_id: str, keys: Sequence[str]) -> int:
        """Delete the rows of ``keys``; returns how many existed."""
        if not keys:
            return 0
        async with self._lock(agent_id):
            removed = await self.rows.delete(agent_id, keys)
            if removed:
                self._drop(agent_id, keys)
        return removed

    async def forget(self, agent_id: str, keys: Sequence[str]) -> None:
        """Drop ``keys`` from the index only (their rows are gone already)."""
        async with self._lock(agent_id):
            self._drop(agent_id, keys)

    def _drop(self, agent_id: str, keys: Sequence[str]) -> None:
        index = self._indexes.get(agent_id)
        if index is not None:
            for key in keys:
                index.remove(key)
            index.signature = None
