"""The collaborators behind IndexedMemory, each through its own constructor: the
embedding gate's cooldown and the live index's reconciliation with the row store."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from beamclaw_memory import MemoryCategory
from beamclaw_memory.backends import InMemoryRowStore, MemoryRow
from beamclaw_memory.backends.embedding_gate import EmbeddingGate
from beamclaw_memory.backends.live_index import LiveIndexes
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
