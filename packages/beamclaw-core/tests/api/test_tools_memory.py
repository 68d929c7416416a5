"""``ToolsMemory``: the real memory service behind the tools' ``MemoryPort``.

Memory's errors become the tools' errors at this boundary (the memory tools catch only
their own package's errors); values pass through with their string modes and categories.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from beamclaw_core import ToolsMemory
from beamclaw_memory import Database, MemorySettings, create_memory_service
from beamclaw_memory.testing import HashingEmbedder
from beamclaw_tools import MemoryInputRejectedError, MemoryUnavailableError, SessionRef
from beamclaw_tools.builtin import memory_tools

AGENT = "default"


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'm.db'}")
    await db.migrate()
    yield db
    await db.dispose()


async def test_values_pass_through_with_string_modes_and_categories(database: Database) -> None:
    service = create_memory_service(
        MemorySettings(backend="sql"), database, embedder=HashingEmbedder()
    )
    port = ToolsMemory(service)
    try:
        entry = await port.store(AGENT, "user.tea", "Likes green tea", "custom", source="s")
        assert (entry.key, entry.category) == ("user.tea", "custom")
        found = await port.search(AGENT, "green tea", mode="keyword", category="custom")
        assert found.mode == "keyword"
        assert [(h.key, h.category) for h in found.hits] == [("user.tea", "custom")]
        assert (await port.search(AGENT, "green tea", category="core")).hits == ()
    finally:
        await service.aclose()


async def test_a_refused_value_keeps_its_reason(database: Database) -> None:
    service = create_memory_service(MemorySettings(backend="sql"), database)
    try:
        with pytest.raises(MemoryInputRejectedError) as raised:
            await ToolsMemory(service).store(AGENT, "@file/x", "v", "core")
        assert "indexer" in raised.value.reason
    finally:
        await service.aclose()


async def test_a_failing_index_is_memory_unavailable_for_the_tools(
    database: Database, tmp_path: Path
) -> None:
    service = create_memory_service(MemorySettings(backend="sql"), database)
    await database.write(lambda conn: conn.execute(sa.text("DROP TABLE memory_sources")))
    (tmp_path / "MEMORY.md").write_text("Likes plums.\n", encoding="utf-8")
    port = ToolsMemory(service)
    try:
        with pytest.raises(MemoryUnavailableError) as raised:
            await port.index_workspace(AGENT, tmp_path)
        assert "memory_sources" in str(raised.value)
        session = SessionRef(session_id="s-1", agent_id=AGENT, workspace=tmp_path)
        search = {t.definition.name: t for t in memory_tools(port)}["memory_search"]
        out = await search.execute({"query": "plums"}, session)
        assert not out.is_error
        assert "note: workspace files were not re-indexed" in out.content
    finally:
        await service.aclose()
