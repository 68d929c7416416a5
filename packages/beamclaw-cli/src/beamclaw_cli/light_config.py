"""The few configuration keys light commands need, read without the whole configuration.

Loading every package's section (``beamclaw_gateway.load_config``) builds about sixty
models and imports pydantic-settings and the rate-limit library; even one section's model
(:func:`~beamclaw_obs.read_section`) costs pydantic and the class build, more than the
rest of ``beamclaw status`` or ``beamclaw agent list``. These read their scalar keys from
the table :func:`~beamclaw_obs.section_table.read_table` gives (the file, then the
``BEAMCLAW_…`` overrides, as the full loader reads them) and check them by hand, with
the models' rules and defaults (a test compares them with the full loader's). They check
only what they read; the gateway checks the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from beamclaw_core.workspace.names import DEFAULT_AGENT
from beamclaw_gateway.listen_port import DEFAULT_HOST, DEFAULT_PORT, MAX_PORT, port_over
from beamclaw_obs.errors import ConfigError
from beamclaw_obs.section_table import read_table


def _string(table: dict[str, Any], key: str, default: str, where: tuple[str, str]) -> str:
    value = table.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(where[0], [f"{where[1]}.{key}: Input should be a valid string"])
    return value


def _port(table: dict[str, Any], where: tuple[str, str]) -> int:
    """``port`` as pydantic's lax mode reads an int (an integer, a bool, a whole float, or
    a string of an integer)."""
    value = table.get("port", DEFAULT_PORT)
    if isinstance(value, str):
        value = value.strip()
        value = int(value) if value.lstrip("+-").isdigit() else value
    elif isinstance(value, bool) or (isinstance(value, float) and value.is_integer()):
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX_PORT:
        raise ConfigError(
            where[0], [f"{where[1]}.port: a port number 0-{MAX_PORT} (got {value!r})"]
        )
    return value


def default_agent(config: Path | None = None) -> str:
    """The configured default agent's name (``[core] default_agent``)."""
    table, source = read_table(("core",), path=config)
    return _string(table, "default_agent", DEFAULT_AGENT, (source, "core"))


def gateway_address(config: Path | None = None) -> tuple[str, int]:
    """The gateway's ``(host, port)``: ``[gateway.http]``, then ``BEAMCLAW_PORT``."""
    table, source = read_table(("gateway", "http"), path=config)
    where = (source, "gateway.http")
    return _string(table, "host", DEFAULT_HOST, where), port_over(_port(table, where))
