"""Workspace and transcript indexing: chunking, categories, incremental re-indexing."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from beamclaw_memory import IndexedMemory, InvalidMemoryInputError, MemoryCategory, SearchMode
from beamclaw_memory.indexing import content_hash, file_pieces
from beamclaw_memory.indexing.sources import workspace_files
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


def test_file_pieces_carry_the_lines_they_cover() -> None:
    text = (
        "Preamble line.\r\n\r\n# Work\r\nWorks at Acme.\r\n\r\n"
        "## Projects\r\n" + "\r\n".join(f"Telemetry item {i} shipped." for i in range(12)) + "\r\n"
    )
    pieces = file_pieces("MEMORY.md", text, size=120, overlap=0)
    lines = text.splitlines()
    assert pieces[0].lines == (1, 1) and pieces[0].text == "Preamble line."
    assert pieces[1].lines == (3, 4) and pieces[1].text == "# Work\nWorks at Acme."
    later = [p for p in pieces if p.text.startswith("[Work > Projects] ")]
    assert later, "a long section is cut into several chunks"
    for piece in pieces[2:]:
        assert piece.lines is not None
        first, last = piece.lines
        body = piece.text.removeprefix("[Work > Projects] ")
        assert body == "\n".join(lines[first - 1 : last]).strip()
    assert pieces[-1].lines is not None and pieces[-1].lines[1] == len(lines)
    assert all(p.key.startswith("@file/MEMORY.md#") for p in pieces)


async def test_moved_chunks_get_new_lines_without_reembedding(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    embedder = HashingEmbedder()
    memory = make_service(embedder=embedder)
    ws = workspace(tmp_path)
    await memory.index_workspace(AGENT)
    family = (await memory.search(AGENT, "Kraków sister")).hits[0]
    assert (family.source, family.lines, family.origin) == (
        "file:MEMORY.md",
        (4, 5),
        "MEMORY.md lines 4-5",
    )
    embedded = embedder.texts_embedded
    md = ws / "MEMORY.md"
    md.write_text("Curated by hand.\n\n" + md.read_text(encoding="utf-8"), encoding="utf-8")
    report = await memory.index_workspace(AGENT)
    assert (report.sources_changed, report.chunks_written, report.chunks_removed) == (1, 1, 0)
    assert embedder.texts_embedded == embedded + 1  # the new paragraph only
    moved = (await memory.search(AGENT, "Kraków sister")).hits[0]
    assert moved.key == family.key
    assert moved.lines == (6, 7)
    # another process on the same rows sees the new lines too
    if memory.rows.__class__.__name__ == "SqlRowStore":
        other = make_service(embedder=HashingEmbedder())
        assert (await other.search(AGENT, "Kraków sister")).hits[0].lines == (6, 7)
        await other.aclose()
    await memory.aclose()


async def test_concurrent_passes_index_one_change_once(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    embedder = HashingEmbedder()
    memory = make_service(embedder=embedder)
    workspace(tmp_path)
    reports = await asyncio.gather(*(memory.index_workspace(AGENT) for _ in range(3)))
    written = [r.chunks_written for r in reports]
    assert sum(written) == max(written) > 0  # one pass did the work, the others found it done
    assert embedder.texts_embedded == sum(written)
    totals = memory.index_totals
    assert (totals.passes, totals.sources_changed, totals.chunks_written) == (3, 3, sum(written))
    await memory.aclose()


async def test_upgrade_to_line_ranges_keeps_rows_and_fills_lines_without_reembedding(
    database_url: str, tmp_path: Path
) -> None:
    from alembic import command
    from sqlalchemy import text

    from beamclaw_memory import Database, MemorySettings, Unit, create_memory_service
    from beamclaw_memory.storage import alembic_config, migration_locations

    ws = workspace(tmp_path)
    (piece,) = file_pieces(
        "memory/2024-03-01.md", "Met Alice for coffee at the harbour.\n", 1200, 0
    )
    db = Database(database_url)

    def at_0002(unit: Unit) -> None:
        command.upgrade(alembic_config(migration_locations(), unit.connection), "memory_0002")
        unit.execute(
            text(
                "INSERT INTO memory_entries (agent_id, key, value, category, source, "
                "content_hash, created_at, updated_at, changed_at) VALUES (:a, :k, :v, 'daily', "
                ":s, :h, 1, 1, 1)"
            ),
            {
                "a": AGENT,
                "k": piece.key,
                "v": piece.text,
                "s": "file:memory/2024-03-01.md",
                "h": content_hash(piece.text),
            },
        )
        unit.execute(
            text(
                "INSERT INTO memory_sources VALUES (:a, 'file:memory/2024-03-01.md', :h, 1, 1, 1)"
            ),
            {"a": AGENT, "h": content_hash(piece.text)},
        )

    try:
        await db.write(at_0002)
        await db.migrate()
        kept = await db.read(
            lambda c: c.execute(text("SELECT key, line_start FROM memory_entries")).all()
        )
        assert [tuple(r) for r in kept] == [(piece.key, None)]
        sources = await db.read(lambda c: c.execute(text("SELECT * FROM memory_sources")).all())
        assert sources == []  # forgotten, so the next pass re-reads the file once
        embedder = HashingEmbedder()
        memory = create_memory_service(
            MemorySettings(backend="sql"), db, embedder=embedder, home=ws.parent.parent
        )
        report = await memory.index_workspace(AGENT)
        # the daily log is re-read; its row is kept (no write, no embedding), only its
        # lines are filled; MEMORY.md (two sections) and SOUL.md are new
        assert (report.sources_changed, report.chunks_written) == (3, 3)
        assert embedder.texts_embedded == 3
        hits = (await memory.search(AGENT, "coffee harbour", mode=SearchMode.KEYWORD)).hits
        assert (hits[0].key, hits[0].lines) == (piece.key, (1, 1))
        await memory.aclose()
    finally:
        await db.dispose()


async def test_a_settled_workspace_still_sees_edits_and_deletions(
    make_service: ServiceFactory, tmp_path: Path, clock: FakeClock
) -> None:
    clock.now = time.time()  # files aged an hour are settled for this clock
    memory = make_service()
    ws = workspace(tmp_path)
    for path in ws.rglob("*.md"):
        age(path)
    first = await memory.index_workspace(AGENT)
    assert first.sources_changed == 3
    again = await memory.index_workspace(AGENT)
    assert (again.sources_unchanged, again.chunks_written) == (3, 0)
    md = ws / "MEMORY.md"
    md.write_text("# Car\nDrives a red Fiat Panda.\n", encoding="utf-8")
    age(md)  # an edit whose mtime is old too: only its stat moved
    edited = await memory.index_workspace(AGENT)
    assert (edited.sources_changed, edited.sources_unchanged) == (1, 2)
    assert (await memory.search(AGENT, "Fiat Panda")).hits[0].source == "file:MEMORY.md"
    assert (await memory.search(AGENT, "Marta Kraków")).hits == ()
    (ws / "memory" / "2024-03-01.md").unlink()
    removed = await memory.index_workspace(AGENT)
    assert removed.sources_removed == 1
    assert (await memory.search(AGENT, "coffee harbour")).hits == ()
    await memory.aclose()


async def test_a_transcript_lookup_reads_the_new_chunks_keys_only(
    make_service: ServiceFactory,
) -> None:
    """The indexer's lookup before writing a batch follows the batch, not the session's
    length (issue 18: a turn costs the same at message 20 and message 2,000)."""
    memory = make_service()
    history = [("s1", seq, "user", f"message number {seq} about topic {seq}") for seq in range(40)]
    await memory.index_transcript(AGENT, history)
    stored = await memory.rows.hashes_for_sources(AGENT, ["session:s1"])
    assert len(stored) == 40
    new_keys = list(stored)[:2]
    found = await memory.rows.hashes_for_keys(AGENT, [*new_keys, "@session:s1:nope"])
    assert found == {k: stored[k] for k in new_keys}
    grown = await memory.index_transcript(AGENT, [("s1", 40, "assistant", "the answer")])
    assert (grown.sources_changed, grown.chunks_written) == (1, 1)
    await memory.aclose()


def test_workspace_files_follow_links_inside_the_workspace_only(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    outside = tmp_path / "outside"
    (outside / "logs").mkdir(parents=True)
    (outside / "secret.md").write_text("not the agent's\n")
    (outside / "logs" / "2024-05-05.md").write_text("elsewhere\n")
    (ws / "USER.md").symlink_to(outside / "secret.md")  # leaves the workspace: skipped
    (ws / "TOOLS.md").symlink_to(ws / "SOUL.md")  # stays inside: kept
    (ws / "AGENTS.md").mkdir()  # not a file: skipped
    (ws / "memory" / "2024-03-02.md").symlink_to(outside / "logs" / "2024-05-05.md")
    assert [f.source for f in workspace_files(ws)] == [
        "file:MEMORY.md",
        "file:SOUL.md",
        "file:TOOLS.md",
        "file:memory/2024-03-01.md",
    ]
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "memory").symlink_to(outside / "logs")  # a daily directory outside
    (linked / "MEMORY.md").write_text("x\n")
    files = workspace_files(linked)
    assert [(f.source, f.relpath, f.path) for f in files] == [
        ("file:MEMORY.md", "MEMORY.md", linked / "MEMORY.md")
    ]
    assert workspace_files(tmp_path / "missing") == []


async def test_index_totals_sum_every_pass_however_many(
    make_service: ServiceFactory, tmp_path: Path, clock: FakeClock
) -> None:
    """Passes that found their files as they left them (one shared report each) and
    passes that did work, more of them than are summed at once: the totals are the sum of
    every pass's report."""
    from beamclaw_memory import IndexReport

    clock.now = time.time()
    memory = make_service()
    ws = workspace(tmp_path)
    for path in ws.rglob("*.md"):
        age(path)
    expected = IndexReport(passes=0)
    reports: list[IndexReport] = []
    for n in range(150):
        if n in (40, 100):  # a new file: one pass of work, then quiet passes of 4 or 5
            (ws / "memory" / f"2024-03-{n // 10:02d}.md").write_text(f"Day {n}: tea.\n")
            age(ws / "memory" / f"2024-03-{n // 10:02d}.md")
        reports.append(await memory.index_workspace(AGENT))
        expected = expected.plus(reports[-1])
        if n == 70:
            assert memory.index_totals == expected, "read in between"
    assert memory.index_totals == expected
    assert (expected.passes, expected.sources_changed) == (150, 5)
    quiet = [r for r in reports if r.sources_unchanged == r.sources_seen]
    assert {r.sources_seen for r in quiet} == {3, 4, 5}
    assert all(r.chunks_written == r.sources_changed == 0 for r in quiet)
    await memory.aclose()


async def test_the_default_workspace_follows_beamclaw_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from beamclaw_memory import MemorySettings, create_memory_service

    memory = create_memory_service(MemorySettings(backend="memory"), None)
    monkeypatch.setenv("BEAMCLAW_HOME", str(tmp_path / "a"))
    assert memory.workspace_of(AGENT) == tmp_path / "a" / "agents" / AGENT
    assert memory.workspace_of("other") == tmp_path / "a" / "agents" / "other"
    monkeypatch.setenv("BEAMCLAW_HOME", str(tmp_path / "b"))
    assert memory.workspace_of(AGENT) == tmp_path / "b" / "agents" / AGENT
    monkeypatch.setenv("BEAMCLAW_HOME", "~/bc")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert memory.workspace_of(AGENT) == tmp_path / "h" / "bc" / "agents" / AGENT
    monkeypatch.delenv("BEAMCLAW_HOME")
    assert memory.workspace_of(AGENT) == tmp_path / "h" / ".beamclaw" / "agents" / AGENT
    with pytest.raises(InvalidMemoryInputError):
        memory.workspace_of("../up")
    await memory.aclose()
