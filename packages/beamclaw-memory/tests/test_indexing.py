"""Workspace and transcript indexing: chunking, categories, incremental re-indexing."""

from __future__ import annotations

import os
from pathlib import Path

from beamclaw_memory import IndexedMemory, MemoryCategory, SearchMode
from beamclaw_memory.testing import HashingEmbedder

from .conftest import FakeClock, ServiceFactory

AGENT = "default"


def workspace(root: Path) -> Path:
    ws = root / "home" / "agents" / AGENT
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Work\nWorks at Acme Rockets on the telemetry pipeline.\n\n"
        "# Family\nSister Marta lives in Kraków.\n",
        encoding="utf-8",
    )
    (ws / "memory" / "2024-03-01.md").write_text("Met Alice for coffee at the harbour.\n")
    (ws / "memory" / "notes.md").write_text("not a daily log name: ignored\n")
    (ws / "SOUL.md").write_text("You are a patient assistant who loves astronomy.\n")
    return ws


def age(path: Path) -> None:
    """Backdate a file so the stat shortcut may trust it (it is not 'racy')."""
    stamp = path.stat().st_mtime - 3600
    os.utime(path, (stamp, stamp))


async def test_workspace_files_are_indexed_with_categories(
    service: IndexedMemory, tmp_path: Path
) -> None:
    workspace(tmp_path)
    report = await service.index_workspace(AGENT)
    assert report.sources_seen == 3
    assert report.sources_changed == 3
    assert report.chunks_embedded == report.chunks_written >= 4
    family = await service.search(AGENT, "Kraków sister")
    assert family.hits[0].category is MemoryCategory.CORE
    assert family.hits[0].source == "file:MEMORY.md"
    assert "Marta" in family.hits[0].text
    daily = await service.search(AGENT, "coffee harbour", category=MemoryCategory.DAILY)
    assert daily.hits[0].source == "file:memory/2024-03-01.md"
    assert (await service.search(AGENT, "ignored daily log")).hits == ()
    assert (await service.search(AGENT, "astronomy")).hits[0].source == "file:SOUL.md"


async def test_reindexing_is_incremental(make_service: ServiceFactory, tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    memory = make_service(embedder=embedder)
    ws = workspace(tmp_path)
    await memory.index_workspace(AGENT)
    for path in ws.rglob("*.md"):
        age(path)
    await memory.index_workspace(AGENT)  # records the aged stat
    embedded = embedder.texts_embedded
    unchanged = await memory.index_workspace(AGENT)
    assert unchanged.sources_unchanged == 3
    assert unchanged.chunks_written == 0
    assert embedder.texts_embedded == embedded  # unchanged files cost nothing
    with (ws / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("\n# Car\nDrives a blue Toyota Corolla.\n")
    changed = await memory.index_workspace(AGENT)
    assert changed.sources_changed == 1
    assert changed.chunks_written == 1  # only the new section
    assert embedder.texts_embedded == embedded + 1
    assert (await memory.search(AGENT, "Toyota")).hits[0].source == "file:MEMORY.md"
    (ws / "memory" / "2024-03-01.md").unlink()
    removed = await memory.index_workspace(AGENT)
    assert removed.sources_removed == 1
    assert removed.chunks_removed == 1
    assert (await memory.search(AGENT, "coffee harbour")).hits == ()
    await memory.aclose()


async def test_big_file_is_chunked_and_capped(make_service: ServiceFactory, tmp_path: Path) -> None:
    from beamclaw_memory import ChunkingSettings, MemorySettings

    memory = make_service(
        MemorySettings(chunking=ChunkingSettings(size=200, overlap=40, max_file_bytes=20_000))
    )
    ws = workspace(tmp_path)
    body = " ".join(f"filler{i}" for i in range(5000))
    (ws / "MEMORY.md").write_text(f"# Big\nneedle-fact zebra {body}", encoding="utf-8")
    report = await memory.index_workspace(AGENT)
    assert any("first 20000 bytes" in s for s in report.skipped)
    assert report.chunks_written > 50
    assert (await memory.search(AGENT, "zebra")).hits[0].text.startswith("# Big")
    await memory.aclose()


async def test_transcripts_are_indexed_once(make_service: ServiceFactory, clock: FakeClock) -> None:
    embedder = HashingEmbedder()
    memory = make_service(embedder=embedder)
    messages = [
        ("s1", 1, "user", "My locker code at the gym is 4711."),
        ("s1", 2, "assistant", "Noted."),
        ("s2", 1, "user", "Пароль от вайфая: звёздочка"),
    ]
    first = await memory.index_transcript(AGENT, messages)
    assert first.sources_seen == 2 and first.chunks_written == 3
    again = await memory.index_transcript(AGENT, messages)
    assert again.chunks_written == 0 and again.sources_unchanged == 2
    grown = await memory.index_transcript(AGENT, [*messages, ("s2", 2, "assistant", "Записал.")])
    assert (grown.sources_changed, grown.sources_unchanged, grown.chunks_written) == (1, 1, 1)
    hit = (await memory.search(AGENT, "gym locker code")).hits[0]
    assert hit.category is MemoryCategory.CONVERSATION
    assert hit.source == "session:s1"
    assert hit.text == "user: My locker code at the gym is 4711."
    ru = await memory.search(AGENT, "пароль вайфая", mode=SearchMode.KEYWORD)
    assert ru.hits[0].source == "session:s2"
    await memory.aclose()


async def test_temporal_decay_prefers_recent_daily_logs(
    make_service: ServiceFactory, clock: FakeClock
) -> None:
    from beamclaw_memory import MemorySettings, SearchSettings, TemporalDecaySettings

    cfg = MemorySettings(
        search=SearchSettings(
            temporal_decay=TemporalDecaySettings(enabled=True, half_life_days=7), min_score=0.0
        )
    )
    memory = make_service(cfg)
    await memory.store(AGENT, "old", "standup notes: deploy the parser", MemoryCategory.DAILY)
    clock.advance(30 * 86400)
    await memory.store(AGENT, "new", "standup notes: deploy the parser", MemoryCategory.DAILY)
    await memory.store(AGENT, "core", "standup notes: deploy the parser", MemoryCategory.CORE)
    hits = (await memory.search(AGENT, "standup deploy parser", mode=SearchMode.KEYWORD)).hits
    assert [h.key for h in hits][:2] == ["core", "new"] or [h.key for h in hits][:2] == [
        "new",
        "core",
    ]
    assert hits[-1].key == "old"
    assert hits[-1].score < 0.1
    await memory.aclose()
