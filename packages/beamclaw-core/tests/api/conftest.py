"""Names the tests of this directory import: the echo tool, quiet settings and a memory
service that counts (and can slow) what the core asks of it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import EchoTool, quiet_core_settings
from beamclaw_memory import (
    IndexReport,
    MemoryCategory,
    MemoryService,
    SearchMode,
    SearchResult,
    SeenTranscript,
    TranscriptMessage,
)

__all__ = ["CountingMemory", "EchoTool", "FakeClock", "an_hour_from_now_ns", "make_settings"]

HOUR_NS = 3_600 * 1_000_000_000


def an_hour_from_now_ns() -> int:
    """A wall clock an hour ahead: stat caches given it see every file as settled."""
    return time.time_ns() + HOUR_NS


class FakeClock:
    """A clock that moves only when a test sets ``now``."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_settings(**loop: Any) -> CoreSettings:
    """Quiet ``[core]`` settings; keywords update ``[core.agentic_loop]``."""
    return quiet_core_settings(loop=loop)


class CountingMemory:
    """Delegates to a real memory service; counts searches; can slow them or fail indexing."""

    def __init__(
        self, inner: MemoryService, *, fail_indexing: bool = False, delay: float = 0.0
    ) -> None:
        self.inner = inner
        self.delay = delay
        """Seconds each search takes (a slow backend)."""
        self.searches: list[str] = []
        self.indexed: list[set[str]] = []
        """The sessions of each ``index_transcript`` call."""
        self.fail_indexing = fail_indexing

    async def store(self, *a: Any, **kw: Any) -> Any:
        return await self.inner.store(*a, **kw)

    async def get(self, agent_id: str, key: str) -> Any:
        return await self.inner.get(agent_id, key)

    async def forget(self, agent_id: str, key: str) -> bool:
        return await self.inner.forget(agent_id, key)

    async def recall(self, *a: Any, **kw: Any) -> Any:
        return await self.inner.recall(*a, **kw)

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
        self.searches.append(query)
        if self.delay:
            await asyncio.sleep(self.delay)
        return await self.inner.search(
            agent_id, query, mode=mode, limit=limit, category=category, seen=seen
        )

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> IndexReport:
        return await self.inner.index_workspace(agent_id, workspace)

    async def index_transcript(
        self, agent_id: str, messages: Iterable[TranscriptMessage | tuple[str, int, str, str]]
    ) -> IndexReport:
        if self.fail_indexing:
            raise RuntimeError("index is broken")
        batch = list(messages)
        self.indexed.append({m.session_id for m in batch if isinstance(m, TranscriptMessage)})
        return await self.inner.index_transcript(agent_id, batch)

    async def aclose(self) -> None:
        await self.inner.aclose()
