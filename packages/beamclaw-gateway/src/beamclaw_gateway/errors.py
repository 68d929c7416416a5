"""The beamclaw-gateway error tree."""

from __future__ import annotations


class BeamclawGatewayError(Exception):
    """Base of every error raised by beamclaw-gateway."""


class GatewayConfigError(BeamclawGatewayError):
    """The gateway cannot start with this configuration (bind policy, port)."""


class PortInUseError(BeamclawGatewayError):
    """The configured port is already taken."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        super().__init__(
            f"port {port} on {host} is already in use; stop the other process or set "
            f"BEAMCLAW_PORT / [gateway.http] port"
        )


class GatewayNotStartedError(BeamclawGatewayError):
    """A component was used before the gateway runtime started (or after it stopped)."""
