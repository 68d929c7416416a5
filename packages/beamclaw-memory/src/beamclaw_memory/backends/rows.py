"""The row-store port the memory service persists through, and the in-process store.

A row is one searchable unit of an agent's memory (a stored fact or a chunk of an indexed
file or transcript). Keys starting with ``@`` belong to the indexer. Every write sets the
row's ``changed_at`` to a value greater than any the store has handed out before, and
``signature`` (the agent's count of writes, count of deletes) changes with every insert,
update or delete, whichever process made it; reading it costs the same however many rows
are stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from beamclaw_memory.service import MemoryCategory

if TYPE_CHECKING:
    import numpy as np

Signature = tuple[int, int]
"""``(writes, deletes)`` of one agent's rows: monotonic counters, ``(0, 0)`` before any."""


@dataclass(frozen=True, slots=True)
class Upserted:
    """What an upsert did: each key's new ``changed_at``, and the agent's signature right
    after it, read in its transaction (an upsert moves ``writes`` by exactly one, so the
    signature just before it was ``(writes - 1, deletes)``)."""

    changed: dict[str, float]
    signature: Signature

    @property
    def before(self) -> Signature:
        """The signature the store had just before this upsert."""
        return (self.signature[0] - 1, self.signature[1])


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """One stored unit. ``embedding`` belongs to ``embedding_model`` (both or neither)."""

    key: str
    value: str
    category: MemoryCategory
    content_hash: str
    created_at: float
    updated_at: float
    source: str | None = None
    embedding: np.ndarray | None = None
    embedding_model: str | None = None
    changed_at: float = 0.0
    lines: tuple[int, int] | None = None
    """First and last line of a file chunk in its file (None for other rows)."""


@dataclass(frozen=True, slots=True)
class SourceState:
    """What was indexed from one source (a workspace file): enough to skip it unchanged."""

    source: str
    content_hash: str
    size: int
    mtime_ns: int
    indexed_at: float


class RowStore(Protocol):
    """Persistence of rows and indexed-source states, scoped by agent."""

    async def upsert(self, agent_id: str, rows: Sequence[MemoryRow]) -> Upserted:
        """Insert or replace rows (at least one); returns each key's new ``changed_at``
        and the signature it left."""
        ...

    async def get(self, agent_id: str, key: str) -> MemoryRow | None: ...

    async def fetch(self, agent_id: str, keys: Sequence[str]) -> list[MemoryRow]: ...

    async def delete(self, agent_id: str, keys: Sequence[str]) -> int: ...

    async def set_embeddings(
        self, agent_id: str, items: Sequence[tuple[str, np.ndarray, str]]
    ) -> dict[str, float]:
        """Attach ``(key, vector, model)`` to existing rows; returns new ``changed_at``s."""
        ...

    async def signature(self, agent_id: str) -> Signature:
        """The agent's :data:`Signature` (one read, whatever is stored)."""
        ...

    async def versions(self, agent_id: str, after: float | None = None) -> dict[str, float]:
        """``key -> changed_at`` of every row of the agent (only of the rows changed after
        ``after`` when given)."""
        ...

    async def hashes_for_sources(self, agent_id: str, sources: Sequence[str]) -> dict[str, str]:
        """``key -> content_hash`` of the indexer-owned rows (keys starting ``@``) of any of
        ``sources`` (one query however many sources: the transcript indexer asks for a
        batch of sessions at once)."""
        ...

    async def hashes_for_keys(self, agent_id: str, keys: Sequence[str]) -> dict[str, str]:
        """``key -> content_hash`` of those of ``keys`` that are stored: a lookup whose
        cost follows ``keys``, not the size of their sources (the transcript indexer
        asks for the chunks of new messages only, whatever the session's length)."""
        ...

    async def recent(
        self, agent_id: str, limit: int, category: MemoryCategory | None
    ) -> list[MemoryRow]: ...

    async def source_states(self, agent_id: str, prefix: str) -> dict[str, SourceState]: ...

    async def put_source(self, agent_id: str, state: SourceState) -> None: ...

    async def delete_source(self, agent_id: str, source: str) -> None:
        """Forget a source's state and its indexer-owned rows."""
        ...

    async def aclose(self) -> None: ...


class ChangeClock:
    """Hands out strictly increasing ``changed_at`` values close to ``wall`` (time.time)."""

    def __init__(self, wall: Callable[[], float] = time.time) -> None:
        self._wall = wall
        self._last = 0.0

    def next(self) -> float:
        now = self._wall()
        self._last = now if now > self._last else self._last + 1e-6
        return self._last


class InMemoryRowStore:
    """Rows in process memory: fast, lost on restart (``[memory] backend = "memory"``)."""

    def __init__(self, clock: ChangeClock | None = None) -> None:
        self._rows: dict[str, dict[str, MemoryRow]] = {}
        self._sources: dict[str, dict[str, SourceState]] = {}
        self._clock = clock or ChangeClock()
        self._counts: dict[str, Signature] = {}

    def _bump(self, agent_id: str, *, writes: int = 0, deletes: int = 0) -> None:
        done, gone = self._counts.get(agent_id, (0, 0))
        self._counts[agent_id] = (done + writes, gone + deletes)

    def _agent(self, agent_id: str) -> dict[str, MemoryRow]:
        return self._rows.setdefault(agent_id, {})

    async def upsert(self, agent_id: str, rows: Sequence[MemoryRow]) -> Upserted:
        if not rows:
            raise ValueError("an upsert needs at least one row")
        table = self._agent(agent_id)
        changed: dict[str, float] = {}
        for row in rows:
            table[row.key] = replace(row, changed_at=self._clock.next())
            changed[row.key] = table[row.key].changed_at
        self._bump(agent_id, writes=1)
        return Upserted(changed, self._counts[agent_id])

    async def get(self, agent_id: str, key: str) -> MemoryRow | None:
        return self._agent(agent_id).get(key)

    async def fetch(self, agent_id: str, keys: Sequence[str]) -> list[MemoryRow]:
        table = self._agent(agent_id)
        return [table[k] for k in keys if k in table]

    async def delete(self, agent_id: str, keys: Sequence[str]) -> int:
        table = self._agent(agent_id)
        removed = sum(1 for k in keys if table.pop(k, None) is not None)
        if removed:
            self._bump(agent_id, deletes=1)
        return removed

    async def set_embeddings(
        self, agent_id: str, items: Sequence[tuple[str, np.ndarray, str]]
    ) -> dict[str, float]:
        table = self._agent(agent_id)
        changed: dict[str, float] = {}
        for key, vector, model in items:
            row = table.get(key)
            if row is not None:
                table[key] = replace(
                    row, embedding=vector, embedding_model=model, changed_at=self._clock.next()
                )
                changed[key] = table[key].changed_at
        if changed:
            self._bump(agent_id, writes=1)
        return changed

    async def signature(self, agent_id: str) -> Signature:
        return self._counts.get(agent_id, (0, 0))

    async def versions(self, agent_id: str, after: float | None = None) -> dict[str, float]:
        return {
            k: r.changed_at
            for k, r in self._agent(agent_id).items()
            if after is None or r.changed_at > after
        }

    async def hashes_for_sources(self, agent_id: str, sources: Sequence[str]) -> dict[str, str]:
        wanted = set(sources)
        return {
            k: r.content_hash
            for k, r in self._agent(agent_id).items()
            if r.source in wanted and k.startswith("@")
        }

    async def hashes_for_keys(self, agent_id: str, keys: Sequence[str]) -> dict[str, str]:
        table = self._agent(agent_id)
        return {k: table[k].content_hash for k in keys if k in table}

    async def recent(
        self, agent_id: str, limit: int, category: MemoryCategory | None
    ) -> list[MemoryRow]:
        rows = [
            r for r in self._agent(agent_id).values() if category is None or r.category == category
        ]
        rows.sort(key=lambda r: (-r.updated_at, r.key))
        return rows[:limit]

    async def source_states(self, agent_id: str, prefix: str) -> dict[str, SourceState]:
        states = self._sources.get(agent_id, {})
        return {s: st for s, st in states.items() if s.startswith(prefix)}

    async def put_source(self, agent_id: str, state: SourceState) -> None:
        self._sources.setdefault(agent_id, {})[state.source] = state

    async def delete_source(self, agent_id: str, source: str) -> None:
        self._sources.get(agent_id, {}).pop(source, None)
        table = self._agent(agent_id)
        owned = [k for k, r in table.items() if r.source == source and k.startswith("@")]
        for key in owned:
            del table[key]
        if owned:
            self._bump(agent_id, deletes=1)

    async def aclose(self) -> None:
        return None
