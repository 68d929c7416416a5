"""Each agent's in-process search index, kept in step with the row store.

Invariants:

* Every write and delete goes through :class:`LiveIndexes`: the rows change in the store
  and, under the agent's lock, in its index (when one is built). A delete clears the
  index's signature, so the next :meth:`~LiveIndexes.synced` checks the store again; an
  upsert moves it to the signature the upsert left when the index held the one just
  before it (no other write came between: the index is the store's) and no incremental
  sync since the last full one may have missed a late-stamped row, and clears it
  otherwise. So the searches of a process that alone writes an agent's memory (the
  transcript indexer, between every two turns) read the signature and nothing more.
* :meth:`~LiveIndexes.synced` reconciles the index with the store first — the agent's
  signature (its write and delete counters, one primary-key read; skipped while the
  index is in step with this process's writes and the last read is younger than
  ``recheck_seconds``, so another process's writes show within that time), and when it
  differs,
  the versions of the rows changed since the newest one the index holds (less
  :data:`CLOCK_MARGIN`, for another process's clock and commit delay), so a sync costs
  what changed, not what is stored. A full per-key version diff runs when the delete
  counter moved since the last sync (a row deleted, here or elsewhere), on the first
  sync, and at most every :data:`FULL_SYNC_SECONDS` otherwise: rows written by another
  process on the same database are found, however late their commit.
* An agent's index is built by its first :meth:`~LiveIndexes.synced` (the first search),
  never before: writes to an agent without one only reach the store. numpy (and bm25s's
  stopword lists) are imported then, with :mod:`beamclaw_memory.search.index`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from beamclaw_memory.backends.rows import MemoryRow, RowStore
from beamclaw_memory.search.tokenizer import Tokenizer

if TYPE_CHECKING:
    from beamclaw_memory.search.index import AgentIndex


CLOCK_MARGIN = 1.0
"""Seconds before the newest ``changed_at`` an index holds that an incremental sync
still asks for: another process stamps a row before its commit, with its own clock."""
FULL_SYNC_SECONDS = 30.0
"""The longest an index goes without a full version diff while the store changes."""


class LiveIndexes:
    """The per-agent :class:`AgentIndex` cache over ``rows`` (vectors of ``model``)."""

    def __init__(
        self,
        rows: RowStore,
        tokenizer: Tokenizer,
        model: str | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        recheck_seconds: float = 0.0,
    ) -> None:
        self.rows = rows
        self._recheck = recheck_seconds
        self._tokenizer = tokenizer
        self._model = model
        self._indexes: dict[str, AgentIndex] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._clock = clock
        self._full_at: dict[str, float] = {}
        """``clock()`` (monotonic) of each agent's last full version diff."""
        self._newest: dict[str, float] = {}
        """The newest ``changed_at`` each agent's index has applied."""
        self._deletes: dict[str, int] = {}
        """Each agent's delete counter at its last sync."""
        self._checked: dict[str, float] = {}
        """``clock()`` when each agent's signature was last read (taken before the read)."""
        self._unsure: set[str] = set()
        """Agents whose index had an incremental sync (of another process's writes) since
        its last full one: until that runs, a row stamped late may be missing."""

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
            now = self._clock()
            checked = self._checked.get(agent_id)
            if (
                index.signature is not None
                and checked is not None
                and now - checked < self._recheck
            ):
                return index  # in step with our writes; others' show after the window
            signature = await self.rows.signature(agent_id)
            self._checked[agent_id] = now
            if signature != index.signature:
                full_at = self._full_at.get(agent_id)
                deleted = self._deletes.get(agent_id) != signature[1]
                if full_at is None or deleted or self._clock() - full_at > FULL_SYNC_SECONDS:
                    await self._full_sync(agent_id, index)
                else:
                    newest = self._newest.get(agent_id, 0.0)
                    versions = await self.rows.versions(agent_id, after=newest - CLOCK_MARGIN)
                    await self._apply_changed(agent_id, index, versions)
                    self._unsure.add(agent_id)
                index.signature = signature
                self._deletes[agent_id] = signature[1]
            return index

    async def _full_sync(self, agent_id: str, index: AgentIndex) -> None:
        versions = await self.rows.versions(agent_id)
        for key in [k for k in index.row_keys() if k not in versions]:
            index.remove(key)
        await self._apply_changed(agent_id, index, versions)
        self._full_at[agent_id] = self._clock()
        self._unsure.discard(agent_id)

    async def _apply_changed(
        self, agent_id: str, index: AgentIndex, versions: dict[str, float]
    ) -> None:
        changed = [k for k, v in versions.items() if index.version(k) != v]
        if changed:
            for row in await self.rows.fetch(agent_id, changed):
                index.apply(row)
                self._seen(agent_id, row.changed_at)

    def noted(self, agent_id: str, index: AgentIndex, versions: dict[str, float]) -> None:
        """Record ``key -> changed_at`` of rows this process changed and ``index`` already
        reflects (embeddings attached); the next :meth:`synced` checks the store again."""
        index.note_versions(versions)
        for changed_at in versions.values():
            self._seen(agent_id, changed_at)
        index.signature = None

    def _seen(self, agent_id: str, changed_at: float) -> None:
        if changed_at > self._newest.get(agent_id, 0.0):
            self._newest[agent_id] = changed_at

    async def write(self, agent_id: str, rows: Sequence[MemoryRow]) -> None:
        """Upsert ``rows`` and apply them (with their new versions) to the index."""
        async with self._lock(agent_id):
            if not rows:
                return
            written = await self.rows.upsert(agent_id, rows)
            index = self._indexes.get(agent_id)
            if index is not None:
                changed = written.changed
                for row in rows:
                    index.apply(replace(row, changed_at=changed[row.key]))
                    self._seen(agent_id, changed[row.key])
                in_step = index.signature == written.before and agent_id not in self._unsure
                index.signature = written.signature if in_step else None

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
