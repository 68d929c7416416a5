"""The ``[gateway]`` configuration section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from beamclaw_obs import Secret, Section


class HttpSettings(Section):
    """``[gateway.http]``: the HTTP listener."""

    host: str = "127.0.0.1"
    """Bind address. A non-loopback address requires ``token``."""
    port: int = Field(default=18800, ge=0, le=65535)
    """TCP port; ``BEAMCLAW_PORT`` overrides. 0 picks a free port."""
    token: Secret | None = None
    """Bearer token for ``/v1``, ``/api``, ``/ws`` and A2A (``{ env = "VAR" }``)."""
    metrics_public: bool = True
    """Serve ``/metrics`` without a token (loopback deployments); False requires it."""


class TelegramSettings(Section):
    """``[gateway.channels.telegram]``."""

    enabled: bool = False
    token: Secret | None = None
    mode: Literal["long_poll", "webhook"] = "long_poll"
    api_base_url: str = "https://api.telegram.org"
    dm_policy: Literal["open", "allowlist", "pairing"] = "pairing"


class TuiSettings(Section):
    """``[gateway.channels.tui]``."""

    enabled: bool = True


class ChannelsSettings(Section):
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    tui: TuiSettings = Field(default_factory=TuiSettings)


class GatewaySettings(Section):
    """``[gateway]``: HTTP API and channels."""

    http: HttpSettings = Field(default_factory=HttpSettings)
    channels: ChannelsSettings = Field(default_factory=ChannelsSettings)
