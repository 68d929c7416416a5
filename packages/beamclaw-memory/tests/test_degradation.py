"""Bad input and failing embeddings: search degrades to keyword with a reason, never raises."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from beamclaw_memory import (
    Database,
    EmbeddingSettings,
    MemoryCategory,
    MemorySettings,
    SearchMode,
    create_memory_service,
)
from beamclaw_memory.backends import NO_PROVIDER
from beamclaw_memory.testing import FakeEmbeddingServer, HashingEmbedder
from beamclaw_obs import EventType
from beamclaw_obs.testing import EventRecorder, recording_events

from .conftest import FakeClock, ServiceFactory


@pytest.fixture
def events() -> Iterator[EventRecorder]:
    with recording_events("memory-test-recorder") as recorder:
        yield recorder


def settings(server: FakeEmbeddingServer, **extra: object) -> MemorySettings:
    emb = EmbeddingSettings.model_validate(
        {"base_url": server.base_url, "model": "m1", "timeout": 0.3, **extra}
    )
    return MemorySettings(backend="sql", embeddings=emb)


async def test_empty_and_whitespace_queries(service_no_embedder: ServiceFactory) -> None:
    memory = service_no_embedder(embedder=None)
    await memory.store("a", "k", "some fact", MemoryCategory.CORE)
    for query in ("", "   \n", "the of and"):
        result = await memory.search("a", query)
        assert result.hits == ()
        assert result.mode is SearchMode.KEYWORD
    assert (await memory.search("a", "")).degraded_reason == "empty query"
    await memory.aclose()


@pytest.fixture
def service_no_embedder(make_service: ServiceFactory) -> ServiceFactory:
    return make_service


async def test_no_provider_means_lexical_search(make_service: ServiceFactory) -> None:
    memory = make_service(embedder=None)
    await memory.store("a", "k", "the spare key is under the flowerpot", MemoryCategory.CORE)
    result = await memory.search("a", "spare key", mode=SearchMode.HYBRID)
    assert result.mode is SearchMode.KEYWORD
    assert result.degraded_reason == NO_PROVIDER
    assert result.hits[0].key == "k"
    await memory.aclose()


async def test_huge_query_is_truncated_not_fatal(make_service: ServiceFactory) -> None:
    memory = make_service()
    await memory.store("a", "k", "the spare key is under the flowerpot", MemoryCategory.CORE)
    result = await memory.search("a", "spare key " + "lorem ipsum " * 100_000)
    assert result.hits[0].key == "k"
    await memory.aclose()


async def test_endpoint_500_degrades_then_recovers_after_cooldown(
    sqlite_db: Database, clock: FakeClock, events: EventRecorder
) -> None:
    async with FakeEmbeddingServer() as server:
        memory = create_memory_service(
            settings(server, failure_cooldown_seconds=30), sqlite_db, clock=clock
        )
        server.status = 500
        # the store succeeds without a vector; the fact stays findable by keyword
        await memory.store("a", "pet", "The beagle is called Bruno", MemoryCategory.CORE)
        result = await memory.search("a", "beagle", mode=SearchMode.HYBRID)
        assert result.mode is SearchMode.KEYWORD
        assert result.degraded_reason is not None and "HTTP 500" in result.degraded_reason
        assert result.hits[0].key == "pet"
        asked = len(server.requests)
        again = await memory.search("a", "beagle", mode=SearchMode.SEMANTIC)
        assert again.mode is SearchMode.KEYWORD
        assert len(server.requests) == asked  # cooling down: the endpoint is not hammered
        server.status = 200
        clock.advance(31)
        healed = await memory.search("a", "beagle", mode=SearchMode.SEMANTIC)
        assert healed.mode is SearchMode.SEMANTIC
        assert healed.degraded_reason is None
        assert healed.hits[0].key == "pet"
        await memory.aclose()
    degraded = events.of(EventType.MEMORY_DEGRADED)
    assert degraded and all("reason" in e.data for e in degraded)


async def test_endpoint_timeout_degrades(sqlite_db: Database, clock: FakeClock) -> None:
    async with FakeEmbeddingServer() as server:
        memory = create_memory_service(settings(server), sqlite_db, clock=clock)
        await memory.store("a", "pet", "The beagle is called Bruno", MemoryCategory.CORE)
        server.delay = 2.0
        result = await memory.search("a", "beagle called")
        assert result.mode is SearchMode.KEYWORD
        assert result.degraded_reason is not None and "timed out" in result.degraded_reason
        assert result.hits[0].key == "pet"
        await memory.aclose()


async def test_configured_dimension_mismatch_degrades(
    sqlite_db: Database, clock: FakeClock
) -> None:
    async with FakeEmbeddingServer() as server:
        server.dimensions_override = 12
        memory = create_memory_service(settings(server, dimensions=64), sqlite_db, clock=clock)
        await memory.store("a", "pet", "The beagle is called Bruno", MemoryCategory.CORE)
        result = await memory.search("a", "beagle")
        assert result.mode is SearchMode.KEYWORD
        assert result.degraded_reason is not None
        assert result.degraded_reason.startswith("dimension mismatch: expected 64, got 12")
        await memory.aclose()


async def test_model_change_with_new_dimension_degrades_once_then_reembeds(
    sqlite_db: Database, clock: FakeClock
) -> None:
    cfg = MemorySettings(backend="sql")
    old = create_memory_service(cfg, sqlite_db, embedder=HashingEmbedder(32, "m"), clock=clock)
    await old.store("a", "pet", "The beagle is called Bruno", MemoryCategory.CORE)
    await old.store("a", "car", "Drives a blue Toyota", MemoryCategory.CORE)
    await old.aclose()
    # same model name, but the provider now returns 48-dimensional vectors
    new_embedder = HashingEmbedder(48, "m")
    new = create_memory_service(cfg, sqlite_db, embedder=new_embedder, clock=clock)
    first = await new.search("a", "beagle", mode=SearchMode.SEMANTIC)
    assert first.mode is SearchMode.KEYWORD
    assert first.degraded_reason == "dimension mismatch: expected 32, got 48"
    assert first.hits[0].key == "pet"
    second = await new.search("a", "beagle", mode=SearchMode.SEMANTIC)
    assert second.mode is SearchMode.SEMANTIC
    assert second.hits[0].key == "pet"
    await new.aclose()


async def test_database_failure_is_a_degraded_result(tmp_path: object, clock: FakeClock) -> None:
    db = Database("sqlite:///" + str(tmp_path) + "/never-migrated.db")
    memory = create_memory_service(MemorySettings(backend="sql"), db, clock=clock)
    result = await memory.search("a", "anything")
    assert result.hits == ()
    assert result.degraded_reason is not None
    assert result.degraded_reason.startswith("memory search failed")
    await db.dispose()
