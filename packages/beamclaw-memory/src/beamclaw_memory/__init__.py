"""beamclaw-memory: the shared database, migrations and the agent's searchable memory."""

from beamclaw_memory.errors import (
    BeamclawMemoryError,
    DatabaseUnavailableError,
    MigrationError,
    StorageError,
)
from beamclaw_memory.service import (
    MemoryCategory,
    MemoryEntry,
    MemoryService,
    SearchHit,
    SearchMode,
    SearchResult,
)
from beamclaw_memory.settings import MemorySettings
from beamclaw_memory.storage import (
    DATABASE_URL_ENV,
    Database,
    expected_heads,
    masked,
    migration_locations,
    normalise_url,
    resolve_database_url,
)

__version__ = "0.1.0"

__all__ = [
    "DATABASE_URL_ENV",
    "BeamclawMemoryError",
    "Database",
    "DatabaseUnavailableError",
    "MemoryCategory",
    "MemoryEntry",
    "MemoryService",
    "MemorySettings",
    "MigrationError",
    "SearchHit",
    "SearchMode",
    "SearchResult",
    "StorageError",
    "__version__",
    "expected_heads",
    "masked",
    "migration_locations",
    "normalise_url",
    "resolve_database_url",
]
