"""The collaborators behind IndexedMemory, each through its own constructor: the
embedding gate's cooldown and the live index's reconciliation with the row store."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pytest

from beamclaw_memory import Database, MemoryCategory
from beamclaw_memory.backends import InMemoryRowStore, MemoryRow, SqlRowStore
from beamclaw_memory.backends.embedding_gate import EmbeddingGate
from beamclaw_memory.backends.live_index import FULL_SYNC_SECONDS, LiveIndexes
from beamclaw_memory.backends.rows import ChangeClock
from beamclaw_memory.errors import EmbeddingUnavailableError
from beamclaw_memory.indexing.sources import content_hash
from beamclaw_memory.search.tokenizer import Tokenizer
from beamclaw_memory.testing import HashingEmbedder

from .conftest import FakeClock


class FlakyEmbedder(HashingEmbedder):
    """Fails while ``down``; ``short`` answers one vector too few."""

    def __init__(self) -> None:
        super().__init__(dimensions=8)
        self.down = False
        self.short = False

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        if self.down:
            self.calls += 1
            raise EmbeddingUnavailableError(self.model, "HTTP 500")
        vectors = await super().embed(texts)
        return vectors[:-1] if self.short else vectors


async def test_a_failure_closes_the_gate_for_the_cooldown(clock: FakeClock) -> None:
    embedder = FlakyEmbedder()
    gate = EmbeddingGate(embedder, cooldown_seconds=30, clock=clock)
    embedder.down = True
    assert await gate.try_embed(["a"]) == (None, "HTTP 500")
    embedder.down = False
    calls = embedder.calls
    with pytest.raises(EmbeddingUnavailableError, match="retried after 30s"):
        await gate.embed(["a"])
    assert embedder.calls == calls, "the endpoint is not called while the gate is closed"
    clock.advance(30)
    assert len(await gate.embed(["a", "b"])) == 2
    embedder.short = True
    with pytest.raises(EmbeddingUnavailableError, match="asked for 2 vectors, got 1"):
        await gate.embed(["a", "b"])
    assert await EmbeddingGate(None, cooldown_seconds=30, clock=clock).try_embed(["a"]) == (
        None,
        None,
    )


def _row(key: str, text: str) -> MemoryRow:
    return MemoryRow(key, text, MemoryCategory.CORE, content_hash(text), 1.0, 1.0)


async def test_the_live_index_finds_rows_another_writer_stored() -> None:
    rows = InMemoryRowStore()
    ours, theirs = (LiveIndexes(rows, Tokenizer(), None) for _ in range(2))
    await ours.write("a", [_row("tea", "likes green tea")])
    index = await ours.synced("a")
    assert {index.doc(s).key for s in index.slots()} == {"tea"}
    await theirs.write("a", [_row("coffee", "hates coffee")])
    assert await theirs.delete("a", ["tea"]) == 1
    index = await ours.synced("a")
    assert {index.doc(s).key for s in index.slots()} == {"coffee"}
    assert await ours.delete("a", ["tea"]) == 0


async def test_another_writer_shows_within_the_recheck_window_and_our_own_at_once() -> None:
    rows = InMemoryRowStore()
    monotonic = FakeClock(0.0)
    ours = LiveIndexes(rows, Tokenizer(), None, clock=monotonic, recheck_seconds=1.0)
    theirs = LiveIndexes(rows, Tokenizer(), None)

    async def keys() -> set[str]:
        index = await ours.synced("a")
        return {index.doc(s).key for s in index.slots()}

    await ours.write("a", [_row("tea", "likes green tea")])
    assert await keys() == {"tea"}  # the counters read at 0.0
    await theirs.write("a", [_row("coffee", "hates coffee")])
    monotonic.advance(0.5)
    assert await keys() == {"tea"}, "within the window: no read of the store"
    monotonic.advance(0.6)
    assert await keys() == {"tea", "coffee"}, "after it: read, and synced"
    await ours.write("a", [_row("cake", "bakes cake")])
    assert await keys() == {"tea", "coffee", "cake"}, "our own write: at once"
    assert await theirs.delete("a", ["tea"]) == 1
    monotonic.advance(0.5)
    assert "tea" in await keys()
    monotonic.advance(0.6)
    assert await keys() == {"coffee", "cake"}
    await ours.delete("a", ["cake"])  # our own delete: the next search reads the store
    assert await keys() == {"coffee"}


class CountingRows(InMemoryRowStore):
    """Rows in memory that count how many versions each ``versions`` call returned."""

    def __init__(self, wall: FakeClock) -> None:
        super().__init__(ChangeClock(wall))
        self.answered: list[int] = []

    async def versions(self, agent_id: str, after: float | None = None) -> dict[str, float]:
        found = await super().versions(agent_id, after)
        self.answered.append(len(found))
        return found


async def test_a_sync_after_another_writer_costs_what_changed_not_what_is_stored() -> None:
    wall = FakeClock()
    rows = CountingRows(wall)
    ours, theirs = (LiveIndexes(rows, Tokenizer(), None) for _ in range(2))
    await ours.write("a", [_row(f"k{i}", f"fact number {i}") for i in range(500)])
    wall.advance(10)
    await ours.write("a", [_row("later", "a later fact")])
    await ours.synced("a")
    rows.answered.clear()
    await theirs.write("a", [_row("k7", "fact number seven, corrected"), _row("new", "a new fact")])
    index = await ours.synced("a")
    assert max(rows.answered) < 500, "the changed rows were asked for, not every version"
    texts = {index.doc(s).key: index.doc(s).text for s in index.slots()}
    assert texts["k7"] == "fact number seven, corrected" and texts["new"] == "a new fact"
    assert len(texts) == 502


async def test_a_change_the_incremental_sync_cannot_see_is_found_by_the_next_full_one(
    sqlite_db: Database,
) -> None:
    """Another process stamps a row by its own clock before it commits: an update stamped
    older than what this index holds (beyond the margin) shows in no ``after`` query, so a
    full diff runs at least every FULL_SYNC_SECONDS while the store changes."""
    behind = FakeClock(time.time() - 60)  # the other process's clock, a minute late
    theirs = SqlRowStore(sqlite_db, ChangeClock(behind))
    monotonic = FakeClock(0.0)
    ours = LiveIndexes(SqlRowStore(sqlite_db), Tokenizer(), None, clock=monotonic)
    await ours.write("a", [_row("tea", "likes green tea")])
    await ours.synced("a")
    await theirs.upsert("a", [_row("tea", "likes black tea")])
    await ours.write("a", [_row("y", "y")])  # the signature moves on; counts agree
    index = await ours.synced("a")
    assert index.doc(index.slot("tea") or 0).text == "likes green tea", "not seen yet"
    monotonic.advance(FULL_SYNC_SECONDS + 1)
    await ours.write("a", [_row("z", "z")])
    index = await ours.synced("a")
    assert index.doc(index.slot("tea") or 0).text == "likes black tea"


async def test_a_process_that_alone_writes_syncs_by_reading_the_signature_only() -> None:
    """The transcript indexer writes between every two turns: the next turn's search must
    not ask the store what changed (issue 18: that diff cost half a millisecond a turn)."""
    rows = CountingRows(FakeClock())
    ours = LiveIndexes(rows, Tokenizer(), None)
    await ours.write("a", [_row("tea", "likes green tea")])
    await ours.synced("a")
    rows.answered.clear()
    for n in range(3):
        await ours.write("a", [_row(f"turn{n}", f"said thing number {n}")])
        index = await ours.synced("a")
        assert index.slot(f"turn{n}") is not None
    assert rows.answered == [], "no version diff for this process's own writes"
    other = LiveIndexes(rows, Tokenizer(), None)
    await other.write("a", [_row("rain", "dislikes rain")])  # another writer comes between
    await ours.write("a", [_row("late", "a late fact")])
    index = await ours.synced("a")
    assert rows.answered, "another writer's rows are looked for"
    assert index.slot("rain") is not None and index.slot("late") is not None
