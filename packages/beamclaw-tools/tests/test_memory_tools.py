"""memory_search / memory_store over a real memory service (in-memory and SQLite).

The service reaches the tools through core's ``ToolsMemory`` adapter, as in the daemon
(beamclaw-memory and beamclaw-core are test dependencies of beamclaw-tools, not runtime ones).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from beamclaw_core import ToolsMemory
from beamclaw_memory import (
    Database,
    EmbeddingSettings,
    IndexedMemory,
    MemorySettings,
    create_memory_service,
)
from beamclaw_memory.testing import FakeEmbeddingServer, HashingEmbedder
from beamclaw_tools import SessionRef, Tool
from beamclaw_tools.builtin.memory_tools import memory_tools


@pytest.fixture(params=["memory", "sql"])
async def memory(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[IndexedMemory]:
    db = Database(f"sqlite:///{tmp_path / 'm.db'}")
    await db.migrate()
    service = create_memory_service(
        MemorySettings(backend=request.param), db, embedder=HashingEmbedder()
    )
    yield service
    await service.aclose()
    await db.dispose()


def tools_by_name(memory: IndexedMemory) -> dict[str, Tool]:
    return {t.definition.name: t for t in memory_tools(ToolsMemory(memory))}


async def test_definitions_are_read_only_without_approval(memory: IndexedMemory) -> None:
    tools = tools_by_name(memory)
    assert set(tools) == {"memory_search", "memory_store"}
    for tool in tools.values():
        assert isinstance(tool, Tool)
        assert tool.definition.requires_approval is False
        assert tool.definition.min_autonomy.value == "read_only"
    assert tools["memory_search"].definition.parameters["required"] == ["query"]


async def test_store_then_search_finds_the_fact(memory: IndexedMemory, session: SessionRef) -> None:
    tools = tools_by_name(memory)
    stored = await tools["memory_store"].execute(
        {"key": "user.dog", "value": "The user's beagle is called Bruno"}, session
    )
    assert not stored.is_error and "user.dog" in stored.content
    entry = await memory.get(session.agent_id, "user.dog")
    assert entry is not None and entry.source == "session:s-1"
    found = await tools["memory_search"].execute({"query": "what is the beagle called"}, session)
    assert not found.is_error
    assert "Bruno" in found.content
    assert found.structured is not None and found.structured["hits"][0]["key"] == "user.dog"


async def test_search_indexes_the_workspace_daily_logs(
    memory: IndexedMemory, session: SessionRef, workspace: Path
) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory" / "2024-05-01.md").write_text(
        "Promised Marta to water her plants in Kraków.", encoding="utf-8"
    )
    result = await tools_by_name(memory)["memory_search"].execute(
        {"query": "Marta plants Kraków", "category": "daily"}, session
    )
    assert "water her plants" in result.content
    assert "memory/2024-05-01.md" in result.content


async def test_bad_arguments_and_refused_values_are_tool_errors(
    memory: IndexedMemory, session: SessionRef
) -> None:
    tools = tools_by_name(memory)
    missing = await tools["memory_search"].execute({}, session)
    assert missing.is_error and "query" in missing.content
    reserved = await tools["memory_store"].execute({"key": "@file/x", "value": "v"}, session)
    assert reserved.is_error and "indexer" in reserved.content
    bad_category = await tools["memory_store"].execute(
        {"key": "k", "value": "v", "category": "nope"}, session
    )
    assert bad_category.is_error


async def test_failing_embeddings_are_reported_not_raised(
    tmp_path: Path, session: SessionRef
) -> None:
    async with FakeEmbeddingServer() as server:
        server.status = 503
        cfg = MemorySettings(
            backend="memory",
            embeddings=EmbeddingSettings(base_url=server.base_url, model="m"),
        )
        service = create_memory_service(cfg, None)
        tools = tools_by_name(service)
        stored = await tools["memory_store"].execute(
            {"key": "car", "value": "Drives a blue Toyota"}, session
        )
        assert not stored.is_error
        found = await tools["memory_search"].execute({"query": "Toyota"}, session)
        assert not found.is_error
        assert "keyword search only" in found.content and "HTTP 503" in found.content
        assert "blue Toyota" in found.content
        await service.aclose()
