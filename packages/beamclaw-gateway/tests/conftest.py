"""Shared helpers: a real gateway on 127.0.0.1 (``beamclaw_gateway.testing``)."""

from __future__ import annotations

from typing import Any

from beamclaw_core.testing import FailingDatabase
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.testing import LiveGateway, live_gateway, quiet_config

__all__ = ["FailingDatabases", "LiveGateway", "gateway_config", "live_gateway"]


class FailingDatabases(list[FailingDatabase]):
    """Every database a gateway opens (pass ``open`` as its ``database_factory``), each
    one failing on demand."""

    def open(self, url: str) -> FailingDatabase:
        self.append(FailingDatabase(url))
        return self[-1]


def gateway_config(**gateway: Any) -> BeamclawConfig:
    """:func:`quiet_config` with ``[gateway]`` attributes replaced."""
    config = quiet_config()
    for key, value in gateway.items():
        setattr(config.gateway, key, value)
    return config
