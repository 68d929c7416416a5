"""AutoContext on its own over a real in-memory memory service: the block it injects is
the budgeted block of the search's hits; a lookup past the deadline is not waited for,
finishes in the background and holds the agent's one slot until then; a lookup the
core's stop cancels leaves the waiting turn without hits, not failed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.sessions.memory_context import (
    AUTO_CONTEXT_KIND,
    AutoContext,
    format_auto_context,
    within_budget,
)
from beamclaw_memory import (
    IndexReport,
    MemoryCategory,
    MemoryService,
    MemorySettings,
    SearchMode,
    SearchResult,
    SeenTranscript,
    create_memory_service,
)

QUESTION = "What does my cat Pixel like?"


class GatedMemory:
    """A real memory service whose searches wait for ``gate`` (a backend as slow as the
    test wants); workspace passes index ``workspace``."""

    def __init__(self, inner: MemoryService, workspace: Path) -> None:
        self.inner = inner
        self.workspace = workspace
        self.gate = asyncio.Event()
        self.gate.set()
        self.searches = 0

    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        mode: SearchMode = SearchMode.HYBRID,
        limit: int = 5,
        category: MemoryCategory | None = None,
        seen: SeenTranscript | None = None,
    ) -> SearchResult:
        self.searches += 1
        await self.gate.wait()
        return await self.inner.search(
            agent_id, query, mode=mode, limit=limit, category=category, seen=seen
        )

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> IndexReport:
        return await self.inner.index_workspace(agent_id, self.workspace)

    async def store(self, *a: Any, **kw: Any) -> Any:
        return await self.inner.store(*a, **kw)

    async def get(self, agent_id: str, key: str) -> Any:
        return await self.inner.get(agent_id, key)

    async def forget(self, agent_id: str, key: str) -> bool:
        return await self.inner.forget(agent_id, key)

    async def recall(self, *a: Any, **kw: Any) -> Any:
        return await self.inner.recall(*a, **kw)

    async def index_transcript(self, *a: Any, **kw: Any) -> Any:
        return await self.inner.index_transcript(*a, **kw)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def memory(tmp_path: Path) -> GatedMemory:
    inner = create_memory_service(MemorySettings(backend="memory"), None)
    for n in range(1, 5):
        await inner.store(
            "default",
            f"cat-{n}",
            f"Fact {n} about Ann's cat Pixel: " + "she likes sunny windows. " * (3 * n),
            MemoryCategory.CORE,
            source="test",
        )
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Pixel\n\nPixel likes the red laser toy.\n")
    return GatedMemory(inner, tmp_path / "ws")


def _auto(
    memory: GatedMemory, *, max_tokens: int | None = None, deadline_seconds: float | None = None
) -> AutoContext:
    return AutoContext(memory, 5, max_tokens=max_tokens, deadline_seconds=deadline_seconds)


@pytest.mark.parametrize("max_tokens", [None, 1_500, 200, 20])
async def test_the_message_is_the_budgeted_block_of_the_hits(
    memory: GatedMemory, max_tokens: int | None
) -> None:
    auto = _auto(memory, max_tokens=max_tokens)
    message = await auto.message("s1", "default", 1, QUESTION)
    hits = (await memory.inner.search("default", QUESTION, limit=5)).hits
    assert len(hits) == 5
    assert hits[-1].origin == "MEMORY.md lines 1-3", "the lookup indexed the workspace first"
    expected = format_auto_context(within_budget(hits, max_tokens))
    assert expected == format_auto_context(hits, max_tokens)
    assert (message.text if message is not None else None) == expected
    if message is not None:
        assert message.meta["kind"] == AUTO_CONTEXT_KIND
    assert await auto.injected("s2", "default", QUESTION) == within_budget(hits, max_tokens)
    assert await auto.message("s1", "default", 1, "another text") is message, "one per turn"
    assert memory.searches == 2, "the turn's second request searched nothing"


async def test_a_lookup_past_the_deadline_finishes_in_the_background(
    memory: GatedMemory,
) -> None:
    auto = _auto(memory, deadline_seconds=0.05)
    memory.gate.clear()
    started = time.monotonic()
    assert await auto.message("s1", "default", 1, QUESTION) is None
    assert time.monotonic() - started < 1.0, "the turn did not wait for the search"
    assert await auto.message("s2", "default", 1, QUESTION) is None
    assert (auto.skipped, memory.searches) == (2, 1), "no second lookup piles on the first"
    memory.gate.set()
    await auto.drain(5.0)  # the first lookup ends in the background, not cancelled
    message = await auto.message("s1", "default", 2, QUESTION)
    assert message is not None and "1. (core: test" in message.text
    assert (auto.skipped, memory.searches) == (2, 2), "the agent's slot was freed"


async def test_a_lookup_cancelled_by_the_stop_leaves_the_waiting_turn_without_hits(
    memory: GatedMemory,
) -> None:
    auto = _auto(memory)  # no deadline: the turn waits for the lookup
    memory.gate.clear()
    turn = asyncio.create_task(auto.message("s1", "default", 1, QUESTION))
    while not memory.searches:
        await asyncio.sleep(0)
    await auto.drain(0.01)
    assert await asyncio.wait_for(turn, 5) is None
    memory.gate.set()
    assert await auto.message("s1", "default", 2, QUESTION) is not None, "slot freed"


class TimingOutMemory(GatedMemory):
    """A backend whose search gives up through ``asyncio.timeout`` (bound to the task it
    was entered in, as aiohttp's and anyio's timeouts are)."""

    async def search(self, agent_id: str, query: str, **kw: Any) -> SearchResult:
        self.searches += 1
        async with asyncio.timeout(0.02):
            await asyncio.sleep(5)
        raise AssertionError("unreachable")


async def test_a_lookup_s_task_bound_timeout_cancels_the_lookup_not_the_turn(
    tmp_path: Path,
) -> None:
    """The lookup runs in a task of its own from its first step: a timeout it enters is
    the lookup's. (Stepping it on the turn's task first, as an emulated eager task would,
    made that timeout cancel the turn.)"""
    inner = create_memory_service(MemorySettings(backend="memory"), None)
    (tmp_path / "ws").mkdir()
    memory = TimingOutMemory(inner, tmp_path / "ws")
    auto = _auto(memory, deadline_seconds=2.0)
    assert await asyncio.wait_for(auto.message("s1", "default", 1, QUESTION), 5) is None
    assert memory.searches == 1
