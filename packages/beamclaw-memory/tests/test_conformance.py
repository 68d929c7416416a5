"""Backend conformance: the same behaviour on in-memory, SQL/SQLite and SQL/PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_memory import (
    InvalidMemoryInputError,
    MemoryCategory,
    MemoryService,
    MemorySettings,
    SearchMode,
    SearchSettings,
    SeenTranscript,
    transcript_position,
)

from .conftest import FakeClock, ServiceFactory

AGENT = "agent-a"


async def test_is_a_memory_service(service: MemoryService) -> None:
    assert isinstance(service, MemoryService)


async def test_store_get_forget_round_trip(service: MemoryService, clock: FakeClock) -> None:
    stored = await service.store(AGENT, "pet", "The dog is called Bruno", MemoryCategory.CORE)
    assert stored.created_at == clock.now == stored.updated_at
    got = await service.get(AGENT, "pet")
    assert got == stored
    clock.advance(60)
    updated = await service.store(AGENT, "pet", "The dog is called Rex", MemoryCategory.CORE)
    assert updated.created_at == stored.created_at
    assert updated.updated_at == clock.now
    assert (await service.get(AGENT, "pet")) == updated
    assert await service.forget(AGENT, "pet") is True
    assert await service.forget(AGENT, "pet") is False
    assert await service.get(AGENT, "pet") is None


async def test_agents_are_isolated(service: MemoryService) -> None:
    await service.store("alice", "secret", "Alice likes oolong tea", MemoryCategory.CORE)
    await service.store("bob", "secret", "Bob likes espresso", MemoryCategory.CORE)
    assert (await service.get("alice", "secret")) is not None
    hits = (await service.search("bob", "oolong tea", mode=SearchMode.KEYWORD)).hits
    assert hits == ()
    bob = await service.search("bob", "espresso")
    assert [h.key for h in bob.hits] == ["secret"]
    assert await service.forget("bob", "secret")
    assert (await service.get("alice", "secret")) is not None


@pytest.mark.parametrize("mode", list(SearchMode))
async def test_search_every_mode_finds_the_fact(service: MemoryService, mode: SearchMode) -> None:
    await service.store(AGENT, "pet", "The beagle is called Bruno", MemoryCategory.CORE)
    await service.store(AGENT, "car", "Drives a blue Toyota Corolla", MemoryCategory.CORE)
    await service.store(AGENT, "tea", "Prefers oolong tea to coffee", MemoryCategory.CUSTOM)
    result = await service.search(AGENT, "what is the beagle called", mode=mode)
    assert result.mode is mode
    assert result.degraded_reason is None
    assert result.hits[0].key == "pet"
    assert result.hits[0].category is MemoryCategory.CORE
    assert 0.0 < result.hits[0].score <= 1.0


async def test_category_filter(service: MemoryService) -> None:
    await service.store(AGENT, "a", "meeting notes about rockets", MemoryCategory.DAILY)
    await service.store(AGENT, "b", "rockets are the user's job", MemoryCategory.CORE)
    result = await service.search(AGENT, "rockets", category=MemoryCategory.DAILY)
    assert [h.key for h in result.hits] == ["a"]
    recalled = await service.recall(AGENT, "rockets", category=MemoryCategory.CORE)
    assert [e.key for e in recalled] == ["b"]


@pytest.mark.parametrize("mode", list(SearchMode))
async def test_a_seen_transcript_is_left_out_before_ranking(
    service: MemoryService, mode: SearchMode
) -> None:
    """A session's messages its model reads already are left out in every mode, and (in
    keyword mode, where the ranking is plain) never take a hit's place: the seen
    messages match best, yet a limit of two gives the others. The same session's
    older messages and another session's stay searchable."""
    rockets = "rockets rockets: the user builds rockets"
    await service.index_transcript(
        AGENT,
        [
            *(("s1", seq, "user", f"{rockets} {seq}") for seq in range(1, 9)),
            ("s2", 1, "user", f"{rockets} elsewhere"),
        ],
    )
    await service.store(AGENT, "job", "The user's job is rockets", MemoryCategory.CORE)

    async def found(seen: SeenTranscript | None, limit: int = 1) -> list[tuple[str, int] | str]:
        result = await service.search(AGENT, "rockets", mode=mode, limit=limit, seen=seen)
        return [transcript_position(h.key) or h.key for h in result.hits]

    assert "job" not in await found(None), "unseen, the transcript outranks the fact"
    if mode is SearchMode.KEYWORD:
        assert await found(SeenTranscript("s1", 1), limit=2) == [("s2", 1), "job"]
    shown = await found(SeenTranscript("s1", 7), limit=20)
    assert ("s1", 7) not in shown and ("s1", 8) not in shown
    assert {("s1", 6), ("s2", 1)} <= set(shown)
    assert ("s1", 8) in await found(SeenTranscript("unknown", 1), limit=20)


async def test_recall_empty_query_returns_most_recent(
    service: MemoryService, clock: FakeClock
) -> None:
    for i in range(4):
        await service.store(AGENT, f"k{i}", f"fact number {i}", MemoryCategory.CUSTOM)
        clock.advance(1)
    recent = await service.recall(AGENT, "", limit=2)
    assert [e.key for e in recent] == ["k3", "k2"]


async def test_limit_is_respected(service: MemoryService) -> None:
    for i in range(12):
        await service.store(AGENT, f"k{i}", f"apples and pears {i}", MemoryCategory.CUSTOM)
    result = await service.search(AGENT, "apples", limit=3, mode=SearchMode.KEYWORD)
    assert len(result.hits) == 3


async def test_invalid_input_is_a_clear_error(service: MemoryService) -> None:
    with pytest.raises(InvalidMemoryInputError) as info:
        await service.store(AGENT, "", "x", MemoryCategory.CORE)
    assert info.value.field == "key"
    with pytest.raises(InvalidMemoryInputError):
        await service.store(AGENT, "@file/MEMORY.md#x", "x", MemoryCategory.CORE)
    with pytest.raises(InvalidMemoryInputError):
        await service.store("../escape", "k", "x", MemoryCategory.CORE)


async def test_huge_value_is_refused_and_large_value_is_searchable(
    make_service: ServiceFactory,
) -> None:
    memory = make_service(MemorySettings(max_value_chars=50_000))
    with pytest.raises(InvalidMemoryInputError) as info:
        await memory.store(AGENT, "big", "word " * 20_000, MemoryCategory.CUSTOM)
    assert info.value.field == "value"
    large = "filler text " * 3_000 + " the treasure is buried under the old oak"
    await memory.store(AGENT, "large", large, MemoryCategory.CUSTOM)
    result = await memory.search(AGENT, "treasure buried oak")
    assert result.hits[0].key == "large"
    await memory.aclose()


@pytest.mark.parametrize(
    "backend_url",
    [
        pytest.param("sqlite", id="sql-sqlite"),
        pytest.param("postgres", id="sql-postgres", marks=pytest.mark.postgres),
    ],
    indirect=True,
)
async def test_second_service_on_same_database_sees_writes(make_service: ServiceFactory) -> None:
    """Two processes on one database: each index follows the other's writes (at once
    with ``store_check_ms = 0``)."""
    every_search = MemorySettings(search=SearchSettings(store_check_ms=0))
    first, second = make_service(every_search), make_service(every_search)
    await first.store(AGENT, "x", "the spare key is under the flowerpot", MemoryCategory.CORE)
    assert (await second.search(AGENT, "spare key")).hits[0].key == "x"
    await first.store(AGENT, "x", "the spare key moved to the mailbox", MemoryCategory.CORE)
    await first.forget(AGENT, "y")
    hit = (await second.search(AGENT, "spare key mailbox")).hits[0]
    assert "mailbox" in hit.text
    await first.forget(AGENT, "x")
    assert (await second.search(AGENT, "spare key")).hits == ()
    await first.aclose()
    await second.aclose()


async def test_another_process_s_writes_show_within_the_store_check_window(
    make_service: ServiceFactory,
) -> None:
    """A search trusts its index for ``store_check_ms`` after reading the store's write
    counters: this process's writes show at once, another's once the window passed."""
    writer = make_service()
    patient = make_service(MemorySettings(search=SearchSettings(store_check_ms=60_000)))
    brisk = make_service(MemorySettings(search=SearchSettings(store_check_ms=50)))
    shared = writer.rows.__class__.__name__ == "SqlRowStore"  # in memory, nothing is
    if shared:
        await writer.store(AGENT, "x", "the spare key is under the flowerpot", MemoryCategory.CORE)
        for reader in (patient, brisk):
            assert (await reader.search(AGENT, "spare key")).hits[0].key == "x"
    await patient.store(AGENT, "y", "the bike lock code is 4711", MemoryCategory.CORE)
    assert (await patient.search(AGENT, "bike lock")).hits[0].key == "y", "its own: at once"
    if shared:
        await writer.store(AGENT, "x", "the spare key moved to the mailbox", MemoryCategory.CORE)
        await writer.store(AGENT, "z", "the boat is moored at pier 9", MemoryCategory.CORE)
        assert (await patient.search(AGENT, "boat pier")).hits == (), "within its window"
        await asyncio.sleep(0.1)
        assert "mailbox" in (await brisk.search(AGENT, "spare key mailbox")).hits[0].text
        assert (await brisk.search(AGENT, "boat pier")).hits[0].key == "z"
    for service in (writer, patient, brisk):
        await service.aclose()


async def test_non_ascii_round_trip_and_search(service: MemoryService) -> None:
    await service.store(AGENT, "ru", "Бабушка живёт в Москве", MemoryCategory.CORE)
    await service.store(AGENT, "ja", "来月、東京の渋谷で友達と会う", MemoryCategory.CORE)
    await service.store(AGENT, "fr", "Crème brûlée au café de la gare", MemoryCategory.CORE)
    assert (await service.get(AGENT, "ru")) is not None
    for query, key in (("бабушка", "ru"), ("東京", "ja"), ("creme brulee", "fr")):
        result = await service.search(AGENT, query, mode=SearchMode.KEYWORD)
        assert result.hits and result.hits[0].key == key, query
