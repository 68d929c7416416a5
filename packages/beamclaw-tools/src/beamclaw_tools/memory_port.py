"""The memory the memory tools need (a port): search, store, re-index a workspace.

beamclaw-tools does not import beamclaw-memory: the composition root passes an adapter
(``beamclaw_core.ToolsMemory`` over the real ``MemoryService``) that satisfies
:class:`MemoryPort` structurally. Invariants of every implementation:

* ``mode`` is ``hybrid``, ``keyword`` or ``semantic``; ``category`` is ``core``, ``daily``,
  ``conversation`` or ``custom``; values come back as those same strings (a ``StrEnum``
  member is one).
* Failures raise only :class:`~beamclaw_tools.errors.MemoryInputRejectedError` (``store``
  refused the key or value) or :class:`~beamclaw_tools.errors.MemoryUnavailableError`
  (the store failed), plus ``OSError`` from ``index_workspace`` reading files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class MemoryHitView(Protocol):
    """One search hit, as the tools show it."""

    @property
    def key(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def category(self) -> str: ...
    @property
    def source(self) -> str | None: ...
    @property
    def lines(self) -> tuple[int, int] | None: ...
    @property
    def origin(self) -> str:
        """Where the hit came from, for people and models (``MEMORY.md lines 3-5``)."""
        ...


class MemorySearchView(Protocol):
    """A search's hits, the mode actually used and why it was degraded (if it was)."""

    @property
    def hits(self) -> Sequence[MemoryHitView]: ...
    @property
    def mode(self) -> str: ...
    @property
    def degraded_reason(self) -> str | None: ...


class StoredMemoryView(Protocol):
    """What ``store`` recorded."""

    @property
    def key(self) -> str: ...
    @property
    def category(self) -> str: ...


class MemoryPort(Protocol):
    """Per-agent searchable memory, as ``memory_search``/``memory_store``/``workspace_memory`` use it."""

    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        mode: str = "hybrid",
        limit: int = 5,
        category: str | None = None,
    ) -> MemorySearchView:
        """The best ``limit`` hits; degrades to keyword search instead of failing."""
        ...

    async def store(
        self, agent_id: str, key: str, value: str, category: str, *, source: str | None = None
    ) -> StoredMemoryView:
        """Record ``value`` under ``key`` (replacing what the key held)."""
        ...

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> object:
        """Re-index the workspace's memory files; unchanged files cost nothing.

        ``workspace`` None means ``$BEAMCLAW_HOME/agents/<agent_id>``.
        """
        ...
