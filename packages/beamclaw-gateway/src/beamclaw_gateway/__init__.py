"""beamclaw-gateway: the HTTP/WebSocket API, channels, auth and rate limiting."""

from beamclaw_gateway._version import __version__
from beamclaw_gateway.app import create_app
from beamclaw_gateway.config import BeamclawConfig, effective_port, load_config
from beamclaw_gateway.errors import (
    BeamclawGatewayError,
    GatewayConfigError,
    PortInUseError,
)
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.server import check_bind_policy, is_loopback, serve
from beamclaw_gateway.settings import GatewaySettings, HttpSettings

__all__ = [
    "BeamclawConfig",
    "BeamclawGatewayError",
    "GatewayConfigError",
    "GatewayRuntime",
    "GatewaySettings",
    "HttpSettings",
    "PortInUseError",
    "__version__",
    "check_bind_policy",
    "create_app",
    "effective_port",
    "is_loopback",
    "load_config",
    "serve",
]
