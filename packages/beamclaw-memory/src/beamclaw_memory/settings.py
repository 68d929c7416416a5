"""The ``[memory]`` configuration section."""

from __future__ import annotations

from typing import Literal

from beamclaw_obs import Section


class MemorySettings(Section):
    """``[memory]``: the memory backend and the shared database."""

    backend: Literal["memory", "sql"] = "sql"
    """``memory`` keeps entries in process (lost on restart); ``sql`` uses the database."""
    database_url: str | None = None
    """SQLAlchemy URL of the shared database; ``BEAMCLAW_DATABASE_URL`` wins. Default:
    SQLite at ``$BEAMCLAW_HOME/beamclaw.db``."""
