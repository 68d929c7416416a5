"""Memory backends: the row-store port, the in-process and SQL stores, the service."""

from beamclaw_memory.backends.indexed import NO_PROVIDER, IndexedMemory
from beamclaw_memory.backends.rows import InMemoryRowStore, MemoryRow, RowStore, SourceState
from beamclaw_memory.backends.sql import SqlRowStore

__all__ = [
    "NO_PROVIDER",
    "InMemoryRowStore",
    "IndexedMemory",
    "MemoryRow",
    "RowStore",
    "SourceState",
    "SqlRowStore",
]
