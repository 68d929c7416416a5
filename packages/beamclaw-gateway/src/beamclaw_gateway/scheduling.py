"""The gateway's scheduler: :class:`~beamclaw_scheduler.Scheduler` wired to this gateway's
core, conversations and channels, and its ``scheduler`` tool registered for the agents.

Built when the runtime has started (it needs the database), only with ``[scheduler]
enabled``; the routes answer 503 ``scheduler_disabled`` otherwise.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from beamclaw_core.api import Core
from beamclaw_core.channels import ChannelRegistry
from beamclaw_core.conversation import Conversation
from beamclaw_core.sessions import SessionAddress, UnknownSessionError
from beamclaw_core.workspace import BootstrapFile, agent_dir, resolve_timezone
from beamclaw_gateway.agents import AgentCatalog
from beamclaw_gateway.config import BeamclawConfig
from beamclaw_memory import Database
from beamclaw_scheduler import (
    FETCH_TOOLS,
    CappedTool,
    FetchQuota,
    JobStore,
    Scheduler,
    SchedulerPorts,
    SchedulerTool,
)
from beamclaw_tools import ToolRegistry

_TZ_TTL = 60.0
"""Seconds a person's timezone (USER.md) is reused before it is read again."""


class CoreSessions:
    """The scheduler's :class:`~beamclaw_scheduler.Sessions` over the running core."""

    def __init__(self, core: Callable[[], Core]) -> None:
        self._core = core

    def derive(self, address: SessionAddress) -> str:
        return self._core().session_id(address)

    async def busy(self, session_id: str) -> bool:
        try:
            info = await self._core().status(session_id)
        except UnknownSessionError:
            return False
        return info.queued > 0 or info.state not in ("idle", "error")

    async def forget(self, session_id: str) -> None:
        await self._core().delete(session_id)


class Timezones:
    """Each agent's view of the person's timezone: ``[core] timezone``, else its USER.md,
    else UTC (re-read at most once a minute)."""

    def __init__(self, configured: str | None, home: Path) -> None:
        self._configured = configured
        self._home = home
        self._cache: dict[str, tuple[float, str]] = {}

    def __call__(self, agent_id: str) -> str:
        now = time.monotonic()
        hit = self._cache.get(agent_id)
        if hit is not None and now - hit[0] < _TZ_TTL:
            return hit[1]
        try:
            user_md = (agent_dir(agent_id, self._home) / BootstrapFile.USER.value).read_text(
                encoding="utf-8"
            )
        except (OSError, ValueError):
            user_md = None
        name = resolve_timezone(self._configured, user_md).name
        self._cache[agent_id] = (now, name)
        return name


def build_scheduler(
    config: BeamclawConfig,
    database: Database,
    core: Callable[[], Core],
    conversation: Conversation,
    channels: ChannelRegistry,
    agents: AgentCatalog,
    *,
    home: Path,
    owner: str,
    reach: Callable[[str], Awaitable[list[str]]] | None = None,
) -> Scheduler:
    """The scheduler of one runtime start (not yet running: call ``start``)."""
    default_agent = config.core.default_agent
    ports = SchedulerPorts(
        conversation=conversation,
        channels=channels,
        sessions=CoreSessions(core),
        agents=agents.ids,
        default_agent=default_agent,
        owner=owner,
        timezone_of=Timezones(config.core.timezone, home),
        heartbeat_file=lambda agent: agent_dir(agent, home) / BootstrapFile.HEARTBEAT.value,
        clock=time.time,
        sleep=asyncio.sleep,
        reach=reach,
    )
    per_agent = {agent_id: own.heartbeat for agent_id, own in config.agents.items()}
    return Scheduler(config.scheduler, JobStore(database, time.time), ports, heartbeats=per_agent)


def cap_fetches(tools: ToolRegistry, quota: FetchQuota) -> None:
    """Put the fetching tools of ``tools`` under ``quota`` (exploration beats' cap)."""
    for name in FETCH_TOOLS:
        tool = tools.get(name)
        if tool is not None and not isinstance(tool, CappedTool):
            tools.register(CappedTool(tool, quota), replace=True)


__all__ = ["CoreSessions", "SchedulerTool", "Timezones", "build_scheduler", "cap_fetches"]
