"""The embeddings client against a real local HTTP server, and the persistent cache."""

from __future__ import annotations

import numpy as np
import pytest

from beamclaw_memory import (
    CachingEmbedder,
    Database,
    EmbeddingCache,
    EmbeddingDimensionError,
    EmbeddingSettings,
    EmbeddingUnavailableError,
    MemoryCategory,
    MemorySettings,
    OpenAIEmbedder,
    SearchMode,
    create_memory_service,
)
from beamclaw_memory.testing import FakeEmbeddingServer, HashingEmbedder
from beamclaw_obs import Secret

from .conftest import FakeClock


def settings_for(server: FakeEmbeddingServer, **extra: object) -> EmbeddingSettings:
    return EmbeddingSettings.model_validate(
        {"base_url": server.base_url, "model": "test-embed", **extra}
    )


async def test_client_batches_orders_and_sends_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EMBED_KEY", "sk-test-123")
    async with FakeEmbeddingServer(dimensions=32) as server:
        client = OpenAIEmbedder(
            settings_for(server, batch_size=2, api_key=Secret.from_env("EMBED_KEY"))
        )
        texts = ["one", "two", "three", "four", "five"]
        vectors = await client.embed(texts)
        await client.aclose()
    assert [len(r.inputs) for r in server.requests] == [2, 2, 1]
    assert {r.authorization for r in server.requests} == {"Bearer sk-test-123"}
    expected = HashingEmbedder(32).vector("three")
    assert np.allclose(vectors[2], expected)


async def test_client_missing_key_is_unavailable_not_a_crash() -> None:
    async with FakeEmbeddingServer() as server:
        client = OpenAIEmbedder(settings_for(server, api_key={"env": "NOT_SET_ANYWHERE"}))
        with pytest.raises(EmbeddingUnavailableError, match="NOT_SET_ANYWHERE"):
            await client.embed(["x"])
        await client.aclose()
    assert server.requests == []


async def test_client_error_status_timeout_and_dimension_mismatch() -> None:
    async with FakeEmbeddingServer(dimensions=16) as server:
        client = OpenAIEmbedder(settings_for(server, dimensions=16, timeout=0.2))
        server.status = 500
        with pytest.raises(EmbeddingUnavailableError, match="HTTP 500"):
            await client.embed(["x"])
        server.status, server.delay = 200, 1.0
        with pytest.raises(EmbeddingUnavailableError, match="timed out"):
            await client.embed(["x"])
        server.delay, server.dimensions_override = 0.0, 8
        with pytest.raises(EmbeddingDimensionError) as info:
            await client.embed(["x"])
        assert (info.value.expected, info.value.actual) == (16, 8)
        await client.aclose()


async def test_cache_persists_across_instances_and_expires(
    sqlite_db: Database, clock: FakeClock
) -> None:
    inner = HashingEmbedder(16)
    first = CachingEmbedder(inner, EmbeddingCache(sqlite_db, ttl_seconds=3600, clock=clock))
    await first.embed(["alpha", "beta", "alpha"])
    assert inner.texts_embedded == 2  # duplicates are sent once
    restarted = CachingEmbedder(inner, EmbeddingCache(sqlite_db, ttl_seconds=3600, clock=clock))
    again = await restarted.embed(["beta", "alpha"])
    assert inner.texts_embedded == 2  # served from the table, no new request
    assert np.allclose(again[0], inner.vector("beta"))
    clock.advance(3601)
    await restarted.embed(["alpha"])
    assert inner.texts_embedded == 3  # expired
    await restarted.cache.invalidate("hashing-ngram")
    fresh = CachingEmbedder(inner, EmbeddingCache(sqlite_db, ttl_seconds=3600, clock=clock))
    await fresh.embed(["beta"])
    assert inner.texts_embedded == 4  # invalidated


async def test_cache_ignores_vectors_of_another_size(sqlite_db: Database) -> None:
    cache = EmbeddingCache(sqlite_db)
    await cache.put_many("m", ["x"], [np.ones(8, dtype=np.float32)])
    assert set(await cache.get_many("m", ["x"], dimensions=8)) == {0}
    assert await cache.get_many("m", ["x"], dimensions=16) == {}  # stale: removed
    assert await EmbeddingCache(sqlite_db).get_many("m", ["x"]) == {}


async def test_restarted_service_does_not_pay_the_endpoint_again(
    sqlite_db: Database, clock: FakeClock
) -> None:
    async with FakeEmbeddingServer() as server:
        cfg = MemorySettings(embeddings=settings_for(server))
        memory = create_memory_service(cfg, sqlite_db, clock=clock)
        await memory.store("a", "pet", "The beagle is called Bruno", MemoryCategory.CORE)
        await memory.search("a", "beagle name")
        paid = server.inputs_seen
        await memory.aclose()
        restarted = create_memory_service(cfg, sqlite_db, clock=clock)
        result = await restarted.search("a", "beagle name", mode=SearchMode.SEMANTIC)
        assert result.degraded_reason is None
        assert result.hits[0].key == "pet"
        assert server.inputs_seen == paid  # stored vectors and cached query vector reused
        await restarted.aclose()
