"""Memory backends: the row-store port, the in-process and SQL stores, the service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_memory.backends.hybrid_search import NO_PROVIDER
    from beamclaw_memory.backends.indexed import IndexedMemory
    from beamclaw_memory.backends.rows import InMemoryRowStore, MemoryRow, RowStore, SourceState
    from beamclaw_memory.backends.sql import SqlRowStore
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_memory.backends.hybrid_search": ("NO_PROVIDER",),
            "beamclaw_memory.backends.indexed": ("IndexedMemory",),
            "beamclaw_memory.backends.rows": (
                "InMemoryRowStore",
                "MemoryRow",
                "RowStore",
                "SourceState",
            ),
            "beamclaw_memory.backends.sql": ("SqlRowStore",),
        },
    )

__all__ = [
    "NO_PROVIDER",
    "InMemoryRowStore",
    "IndexedMemory",
    "MemoryRow",
    "RowStore",
    "SourceState",
    "SqlRowStore",
]
