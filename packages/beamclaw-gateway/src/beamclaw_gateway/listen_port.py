"""The port the gateway listens on: ``BEAMCLAW_PORT`` over ``[gateway.http] port``.

Standard library only: ``beamclaw status`` reads it without building the settings models.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from beamclaw_gateway.errors import GatewayConfigError

PORT_ENV = "BEAMCLAW_PORT"
DEFAULT_PORT = 18800
DEFAULT_HOST = "127.0.0.1"
MAX_PORT = 65535


def port_over(configured: int, environ: Mapping[str, str] | None = None) -> int:
    """``BEAMCLAW_PORT`` if set, else ``configured``. Raises :class:`GatewayConfigError`
    for a value that is not a port number."""
    raw = (os.environ if environ is None else environ).get(PORT_ENV)
    if not raw:
        return configured
    try:
        port = int(raw)
    except ValueError as exc:
        raise GatewayConfigError(f"{PORT_ENV}={raw!r} is not a port number") from exc
    if not 0 <= port <= MAX_PORT:
        raise GatewayConfigError(f"{PORT_ENV}={raw!r} is outside 0-{MAX_PORT}")
    return port
