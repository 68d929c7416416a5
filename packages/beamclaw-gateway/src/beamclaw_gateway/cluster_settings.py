"""The ``[cluster]`` configuration section: several gateway nodes (docs/scale-out.md)."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from pydantic import Field, field_validator

from beamclaw_gateway.errors import GatewayConfigError
from beamclaw_obs import Section

if TYPE_CHECKING:  # the light CLI commands read this section without the database stack
    from beamclaw_core.cluster import ClusterLink
    from beamclaw_memory import Database


class ClusterSettings(Section):
    """``[cluster]``: gateway nodes sharing sessions through PostgreSQL and Redis.

    Off by default: one node on SQLite needs none of it. When on, every node uses the same
    PostgreSQL database (``[memory] database_url``) and Redis, and the same workspace
    directory (``BEAMCLAW_HOME`` on a shared path)."""

    enabled: bool = False
    """Run as one node of a cluster (needs ``redis_url`` and PostgreSQL)."""
    node_id: str = ""
    """This node's name, unique in the cluster; empty: ``<host name>-<process id>``."""
    redis_url: str = "redis://127.0.0.1:6379/0"
    """Redis for session leases, commands and relayed turn events."""
    lease_seconds: float = Field(default=15.0, gt=0.5, le=600.0)
    """How long a session's lease lasts unrenewed: a dead node's sessions are taken over
    (and recovered as after a crash) within about this long."""
    key_prefix: str = "beamclaw"
    """Prefix of every Redis key and channel (several clusters on one Redis)."""

    @field_validator("redis_url")
    @classmethod
    def _is_redis(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("redis_url is redis://…, rediss://… or unix://…")
        return value


def cluster_link(settings: ClusterSettings, database: Database) -> ClusterLink | None:
    """The Redis link of an enabled ``[cluster]`` (None: a single node).

    Raises:
        GatewayConfigError: cluster mode on a database other nodes cannot share (SQLite).
    """
    if not settings.enabled:
        return None
    if database.dialect != "postgresql":
        raise GatewayConfigError(
            "[cluster] enabled needs PostgreSQL ([memory] database_url = postgresql://…): "
            f"the nodes cannot share {database.display_url}"
        )
    from beamclaw_core.store import stored_epoch
    from beamclaw_gateway.cluster_link import RedisLink  # redis loads only in cluster mode

    return RedisLink(
        settings.redis_url,
        node_id=settings.node_id or f"{socket.gethostname()}-{os.getpid()}",
        lease_seconds=settings.lease_seconds,
        floor=lambda name: stored_epoch(database, name),
        prefix=settings.key_prefix,
    )
