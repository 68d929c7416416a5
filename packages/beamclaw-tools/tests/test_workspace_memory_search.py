"""``workspace_memory`` search over the agent's own memory files (issue 17, defect 9).

A real memory service on the SQL backend (SQLite, and PostgreSQL when marked): MEMORY.md
and the daily logs written through the tool are searchable at once, edits made outside
the tool are found at the next search, unchanged files cost nothing, deleted files'
hits vanish.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from beamclaw_core import ToolsMemory
from beamclaw_memory import (
    Database,
    EmbeddingSettings,
    IndexedMemory,
    MemorySettings,
    create_memory_service,
)
from beamclaw_memory.testing import FakeEmbeddingServer, HashingEmbedder
from beamclaw_tools import SessionRef, ToolOutput
from beamclaw_tools.builtin import WorkspaceMemoryTool

AGENT = "default"
SESSION = SessionRef(session_id="s-1", agent_id=AGENT)


@pytest.fixture
async def memory(database_url: str) -> AsyncIterator[IndexedMemory]:
    db = Database(database_url)
    await db.migrate()
    service = create_memory_service(MemorySettings(backend="sql"), db, embedder=HashingEmbedder())
    yield service
    await service.aclose()
    await db.dispose()


def tool(memory: IndexedMemory) -> WorkspaceMemoryTool:
    return WorkspaceMemoryTool(ToolsMemory(memory), today=lambda: dt.date(2026, 3, 4))


async def act(t: WorkspaceMemoryTool, **args: Any) -> ToolOutput:
    out = await t.execute(args, SESSION)
    assert not out.is_error, out.content
    return out


def sources(out: ToolOutput) -> list[str]:
    assert out.structured is not None
    return [str(h["source"]) for h in out.structured["hits"]]


async def test_tool_writes_are_searchable_at_once_with_their_file(memory: IndexedMemory) -> None:
    t = tool(memory)
    await act(t, action="append", content="# Family\nSister Marta lives in Kraków.")
    await act(t, action="append_daily", content="Met Alice for coffee at the harbour.")
    # indexed by the write itself: the service finds both without any tool search first
    direct = await memory.search(AGENT, "Marta Kraków")
    assert [h.source for h in direct.hits] == ["file:MEMORY.md"]
    found = await act(t, action="search", query="Marta Kraków")
    assert sources(found) == ["file:MEMORY.md"]
    assert "MEMORY.md lines 1-2" in found.content
    assert "Sister Marta lives in Kraków." in found.content
    daily = await act(t, action="search", query="coffee harbour")
    assert sources(daily) == ["file:memory/2026-03-04.md"]
    assert "memory/2026-03-04.md line 1" in daily.content


async def test_outside_edit_is_found_and_the_old_text_is_gone(
    memory: IndexedMemory, beamclaw_home: Path
) -> None:
    t = tool(memory)
    await act(t, action="replace", content="# Car\nDrives a blue Toyota Corolla.")
    assert sources(await act(t, action="search", query="Toyota Corolla")) == ["file:MEMORY.md"]
    # a person edits MEMORY.md in an editor
    md = beamclaw_home / "agents" / AGENT / "MEMORY.md"
    md.write_text("# Car\nSold the Toyota; now rides a green Brompton bicycle.\n", "utf-8")
    fresh = await act(t, action="search", query="Brompton bicycle")
    assert sources(fresh) == ["file:MEMORY.md"]
    assert "green Brompton" in fresh.content
    stale = await act(t, action="search", query="Corolla")
    assert sources(stale) == []
    assert "Corolla" not in stale.content


async def test_unchanged_files_are_not_reindexed(memory: IndexedMemory) -> None:
    t = tool(memory)
    await act(t, action="append", content="Prefers green tea over coffee.")
    await act(t, action="append_daily", content="Booked the dentist for Friday.")
    await act(t, action="search", query="green tea")
    before = memory.index_totals
    assert before.sources_changed == 2
    for query in ("green tea", "dentist", "Friday"):
        await act(t, action="search", query=query)
    after = memory.index_totals
    assert after.passes == before.passes + 3  # each search checked the files...
    assert after.sources_changed == before.sources_changed  # ...and re-indexed none
    assert after.chunks_written == before.chunks_written
    assert after.chunks_embedded == before.chunks_embedded
    await act(t, action="append", content="Allergic to peanuts.")
    changed = memory.index_totals
    assert changed.sources_changed == after.sources_changed + 1  # only MEMORY.md
    assert changed.chunks_written == after.chunks_written + 1


async def test_deleted_daily_log_hits_vanish(memory: IndexedMemory, beamclaw_home: Path) -> None:
    t = tool(memory)
    await act(t, action="append_daily", content="Met Alice for coffee at the harbour.")
    assert sources(await act(t, action="search", query="harbour")) == ["file:memory/2026-03-04.md"]
    (beamclaw_home / "agents" / AGENT / "memory" / "2026-03-04.md").unlink()
    gone = await act(t, action="search", query="harbour")
    assert sources(gone) == []
    assert (await memory.search(AGENT, "harbour")).hits == ()


async def test_a_write_succeeds_when_indexing_fails(database_url: str, beamclaw_home: Path) -> None:
    db = Database(database_url)
    await db.migrate()
    memory = create_memory_service(MemorySettings(backend="sql"), db)
    await db.write(lambda unit: unit.execute(sa.text("DROP TABLE memory_sources")))
    try:
        t = tool(memory)
        out = await t.execute({"action": "append", "content": "Likes plums."}, SESSION)
        assert not out.is_error  # the text is written: the model must not append it again
        assert out.content.startswith("appended 12 characters to MEMORY.md (not searchable yet:")
        assert (beamclaw_home / "agents" / AGENT / "MEMORY.md").read_text() == "Likes plums.\n"
        found = await t.execute({"action": "search", "query": "plums"}, SESSION)
        assert not found.is_error
        assert "workspace files were not re-indexed" in found.content
    finally:
        await memory.aclose()
        await db.dispose()


async def test_a_hung_embedding_endpoint_does_not_hold_a_write(
    database_url: str, beamclaw_home: Path
) -> None:
    db = Database(database_url)
    await db.migrate()
    async with FakeEmbeddingServer(delay=1.5) as server:
        cfg = MemorySettings(
            backend="sql", embeddings=EmbeddingSettings(base_url=server.base_url, model="m")
        )
        memory = create_memory_service(cfg, db)
        t = WorkspaceMemoryTool(ToolsMemory(memory), index_budget_seconds=0.2)
        started = time.monotonic()
        out = await t.execute({"action": "append", "content": "Likes plums."}, SESSION)
        assert time.monotonic() - started < 1.2  # the budget, not the endpoint
        assert not out.is_error
        assert "not re-indexed within 0.2 s" in out.content
        assert (beamclaw_home / "agents" / AGENT / "MEMORY.md").read_text() == "Likes plums.\n"
        server.delay = 0.0  # the endpoint recovers: the next search finishes the job
        found = await t.execute({"action": "search", "query": "plums"}, SESSION)
        assert sources(found) == ["file:MEMORY.md"]
        await memory.aclose()
    await db.dispose()
