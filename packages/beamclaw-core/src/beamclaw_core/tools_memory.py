"""The memory service as the memory tools see it: the adapter for ``beamclaw_tools.MemoryPort``.

beamclaw-tools declares the port and does not depend on beamclaw-memory (installing
beamclaw-mcp must not pull numpy or SQLAlchemy); core imports both and adapts. Invariants:

* Values pass through unchanged: memory's ``SearchResult``/``MemoryEntry`` satisfy the
  port's views (their ``StrEnum`` members are the strings the port promises).
* Memory's errors become the tools' errors at this one boundary:
  ``InvalidMemoryInputError`` -> ``MemoryInputRejectedError`` (same ``reason``), any other
  ``BeamclawMemoryError`` -> ``MemoryUnavailableError``; ``OSError`` passes through.
"""

from __future__ import annotations

from pathlib import Path

from beamclaw_memory import (
    BeamclawMemoryError,
    IndexReport,
    InvalidMemoryInputError,
    MemoryCategory,
    MemoryEntry,
    MemoryService,
    SearchMode,
    SearchResult,
)
from beamclaw_tools import MemoryInputRejectedError, MemoryUnavailableError


class ToolsMemory:
    """A :class:`~beamclaw_memory.MemoryService` behind the tools' ``MemoryPort``."""

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        """The adapted service (for wiring that needs the service itself)."""

    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        mode: str = "hybrid",
        limit: int = 5,
        category: str | None = None,
    ) -> SearchResult:
        """``MemoryService.search`` with the port's string mode and category."""
        try:
            return await self.memory.search(
                agent_id,
                query,
                mode=SearchMode(mode),
                limit=limit,
                category=MemoryCategory(category) if category is not None else None,
            )
        except BeamclawMemoryError as e:
            raise MemoryUnavailableError(str(e)) from e

    async def store(
        self, agent_id: str, key: str, value: str, category: str, *, source: str | None = None
    ) -> MemoryEntry:
        """``MemoryService.store``; a refused key or value keeps its reason."""
        try:
            return await self.memory.store(
                agent_id, key, value, MemoryCategory(category), source=source
            )
        except InvalidMemoryInputError as e:
            raise MemoryInputRejectedError(e.reason) from e
        except BeamclawMemoryError as e:
            raise MemoryUnavailableError(str(e)) from e

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> IndexReport:
        """``MemoryService.index_workspace``."""
        try:
            return await self.memory.index_workspace(agent_id, workspace)
        except BeamclawMemoryError as e:
            raise MemoryUnavailableError(str(e)) from e
