"""beamclaw-gateway: the HTTP/WebSocket API, channels, auth and rate limiting."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_gateway._version import __version__
from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_gateway.app import create_app
    from beamclaw_gateway.config import BeamclawConfig, effective_port, load_config
    from beamclaw_gateway.errors import (
        ApiError,
        BeamclawGatewayError,
        GatewayConfigError,
        GatewayNotStartedError,
        PortInUseError,
    )
    from beamclaw_gateway.mcp_serve import run_mcp_server, serve_conversation
    from beamclaw_gateway.ratelimit import RateDecision, RateLimiter
    from beamclaw_gateway.runtime import GatewayRuntime
    from beamclaw_gateway.server import check_bind_policy, is_loopback, serve
    from beamclaw_gateway.services import GatewayServices
    from beamclaw_gateway.settings import (
        A2ASettings,
        ApiSettings,
        GatewaySettings,
        HttpSettings,
        RateLimitSettings,
        WebhookSourceSettings,
        WebSocketSettings,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_gateway.app": ("create_app",),
            "beamclaw_gateway.config": ("BeamclawConfig", "effective_port", "load_config"),
            "beamclaw_gateway.errors": (
                "ApiError",
                "BeamclawGatewayError",
                "GatewayConfigError",
                "GatewayNotStartedError",
                "PortInUseError",
            ),
            "beamclaw_gateway.mcp_serve": ("run_mcp_server", "serve_conversation"),
            "beamclaw_gateway.ratelimit": ("RateDecision", "RateLimiter"),
            "beamclaw_gateway.runtime": ("GatewayRuntime",),
            "beamclaw_gateway.server": ("check_bind_policy", "is_loopback", "serve"),
            "beamclaw_gateway.services": ("GatewayServices",),
            "beamclaw_gateway.settings": (
                "A2ASettings",
                "ApiSettings",
                "GatewaySettings",
                "HttpSettings",
                "RateLimitSettings",
                "WebhookSourceSettings",
                "WebSocketSettings",
            ),
        },
    )

__all__ = [
    "A2ASettings",
    "ApiError",
    "ApiSettings",
    "BeamclawConfig",
    "BeamclawGatewayError",
    "GatewayConfigError",
    "GatewayNotStartedError",
    "GatewayRuntime",
    "GatewayServices",
    "GatewaySettings",
    "HttpSettings",
    "PortInUseError",
    "RateDecision",
    "RateLimitSettings",
    "RateLimiter",
    "WebSocketSettings",
    "WebhookSourceSettings",
    "__version__",
    "check_bind_policy",
    "create_app",
    "effective_port",
    "is_loopback",
    "load_config",
    "run_mcp_server",
    "serve",
    "serve_conversation",
]
