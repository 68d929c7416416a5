"""beamclaw-gateway: the HTTP/WebSocket API, channels, auth and rate limiting."""

from beamclaw_gateway._version import __version__

from beamclaw_gateway.app import create_app  # noqa: E402
from beamclaw_gateway.config import BeamclawConfig, effective_port, load_config  # noqa: E402
from beamclaw_gateway.errors import (  # noqa: E402
    BeamclawGatewayError,
    GatewayConfigError,
    PortInUseError,
)
from beamclaw_gateway.runtime import GatewayRuntime  # noqa: E402
from beamclaw_gateway.server import check_bind_policy, is_loopback, serve  # noqa: E402
from beamclaw_gateway.settings import GatewaySettings, HttpSettings  # noqa: E402

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
