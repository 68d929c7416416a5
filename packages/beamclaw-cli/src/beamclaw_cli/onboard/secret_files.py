"""Key files under ``$BEAMCLAW_HOME/secrets/`` (directory 0700, files 0600).

A file is written to a temporary name created with mode 0600 and renamed into place, so
no reader ever sees a partial key or a key with looser permissions. The returned path is
relative to the home: the form a ``{ file = "..." }`` secret in beamclaw.toml takes.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

SECRETS_DIRNAME = "secrets"


def store_secret(home: Path, name: str, value: str) -> str:
    """Write ``value`` to ``<home>/secrets/<name>`` (0600); returns ``secrets/<name>``."""
    directory = home / SECRETS_DIRNAME
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.chmod(0o700)
    target = directory / name
    temporary = directory / f".{name}.{secrets.token_hex(4)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(value.strip() + "\n")
        temporary.replace(target)
    finally:
        temporary.unlink(missing_ok=True)
    return f"{SECRETS_DIRNAME}/{name}"


def new_gateway_token() -> str:
    """A fresh bearer token for ``[gateway.http] token`` (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)
