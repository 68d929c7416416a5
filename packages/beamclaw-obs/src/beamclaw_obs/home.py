"""``BEAMCLAW_HOME``: where the database, logs, agents and pid files live."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from beamclaw_obs.errors import HomeNotWritableError

HOME_ENV = "BEAMCLAW_HOME"


def beamclaw_home() -> Path:
    """``$BEAMCLAW_HOME`` or ``~/.beamclaw`` (not created)."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else Path.home() / ".beamclaw"


def ensure_home(path: Path | None = None) -> Path:
    """Create the home directory if needed and prove it is writable.

    Raises :class:`HomeNotWritableError` naming the path and the OS reason.
    """
    home = path or beamclaw_home()
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=home, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise HomeNotWritableError(str(home), exc.strerror or str(exc)) from exc
    return home
