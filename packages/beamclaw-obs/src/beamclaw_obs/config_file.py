"""Which configuration file applies, reading it, and wording a validation error.

Lookup: ``$BEAMCLAW_CONFIG`` if set (it must exist), else ``$BEAMCLAW_HOME/beamclaw.toml``
if present, else the packaged defaults. Light on purpose (no pydantic-settings, no
logging): :func:`~beamclaw_obs.read_section` and :func:`~beamclaw_obs.load_settings`
share it.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from beamclaw_obs.errors import ConfigError
from beamclaw_obs.home import beamclaw_home

CONFIG_ENV = "BEAMCLAW_CONFIG"
CONFIG_FILE_NAME = "beamclaw.toml"
DEFAULTS_SOURCE = "packaged defaults"


def find_config_file(environ: Mapping[str, str] | None = None) -> Path | None:
    """The file the lookup order selects, or ``None`` for the packaged defaults."""
    env = os.environ if environ is None else environ
    explicit = env.get(CONFIG_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(str(path), [f"{CONFIG_ENV} points to a file that does not exist"])
        return path
    candidate = beamclaw_home() / CONFIG_FILE_NAME
    return candidate if candidate.is_file() else None


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; syntax errors become a :class:`ConfigError` with line/column."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), [f"malformed TOML: {exc}"]) from exc
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read: {exc.strerror or exc}"]) from exc


def describe_error(error: Mapping[str, Any], prefix: str = "") -> str:
    """One line for a pydantic error: the key path (under ``prefix``), why, and the value
    (never for a secret, key or token)."""
    loc = ".".join([*filter(None, [prefix]), *(str(p) for p in error.get("loc", ()))])
    msg = str(error.get("msg", "invalid value"))
    value = error.get("input")
    shown = "" if isinstance(value, Mapping | list) else f" (got {value!r})"
    if "secret" in loc.lower() or "key" in loc.lower() or "token" in loc.lower():
        shown = ""
    return f"{loc or '<root>'}: {msg}{shown}"
