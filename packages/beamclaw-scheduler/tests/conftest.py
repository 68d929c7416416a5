"""A scheduler around a real :class:`Core` (SQLite file, scripted provider), a recording
channel and a clock the test moves: ``tick()`` is called by the test, never by a timer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core import HeartbeatSettings
from beamclaw_core.api import Core
from beamclaw_core.channels import (
    ChannelCaps,
    ChannelError,
    ChannelRegistry,
    InboundSink,
    Outbound,
    Receipt,
    UnknownTargetError,
)
from beamclaw_core.conversation import LocalConversation
from beamclaw_core.loop import ApprovalRequested
from beamclaw_core.sessions import SessionAddress, UnknownSessionError
from beamclaw_core.testing import quiet_core_settings
from beamclaw_memory import Database
from beamclaw_obs import ComponentHealth, HealthState
from beamclaw_scheduler import JobStore, Scheduler, SchedulerPorts, SchedulerSettings
from beamclaw_tools import ToolRegistry

T0 = 1_800_000_000.0
"""2027-01-15 08:00 UTC."""


@dataclass
class Clock:
    now: float = T0

    def __call__(self) -> float:
        return self.now


@dataclass
class RecordingChannel:
    """Channel ``rec``: every delivery to target ``me``; any other target is unknown.
    While ``refusing`` is above zero, each delivery is refused (and counts it down)."""

    sent: list[str] = field(default_factory=list[str])
    ids: list[str | None] = field(default_factory=list[str | None])
    """The delivery id of every try, refused ones too."""
    refusing: int = 0
    asked: list[ApprovalRequested] = field(default_factory=list[ApprovalRequested])

    @property
    def name(self) -> str:
        return "rec"

    @property
    def capabilities(self) -> ChannelCaps:
        return ChannelCaps()

    async def run(self, inbound: InboundSink) -> None:
        """Nothing comes in on this channel: it waits until cancelled, as an adapter must."""
        await asyncio.Event().wait()

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        if target != "me":
            raise UnknownTargetError("rec", target)
        self.ids.append(out.delivery_id)
        if self.refusing > 0:
            self.refusing -= 1
            raise ChannelError("rec is down")
        self.sent.append(out.text)
        return Receipt("rec", target, 1)

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        self.asked.append(request)

    def health(self) -> ComponentHealth:
        return ComponentHealth(HealthState.UP)


class CoreSessions:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.forgotten: list[str] = []

    def derive(self, address: SessionAddress) -> str:
        return self.core.session_id(address)

    async def busy(self, session_id: str) -> bool:
        try:
            info = await self.core.status(session_id)
        except UnknownSessionError:
            return False
        return info.queued > 0 or info.state not in ("idle", "error")

    async def forget(self, session_id: str) -> None:
        self.forgotten.append(session_id)
        await self.core.delete(session_id)


@dataclass
class World:
    core: Core
    db: Database
    clock: Clock
    channel: RecordingChannel
    sessions: CoreSessions
    ports: SchedulerPorts
    heartbeat_md: Path

    def scheduler(
        self,
        settings: SchedulerSettings | None = None,
        heartbeats: dict[str, HeartbeatSettings | None] | None = None,
    ) -> Scheduler:
        """A new scheduler (a new runner, or the same gateway after a restart)."""
        settings = settings or SchedulerSettings(enabled=True, min_interval_seconds=1)
        return Scheduler(settings, JobStore(self.db, self.clock), self.ports, heartbeats=heartbeats)


@pytest.fixture
async def world_factory(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    made: list[World] = []

    async def make(provider: Any, tools: ToolRegistry | None = None) -> World:
        db = Database(f"sqlite:///{tmp_path / 'sched.db'}")
        core = Core.create(
            quiet_core_settings(),
            db,
            provider=provider,
            tools=tools or ToolRegistry(),
            system_prompt="You are a test agent.",
        )
        await core.start(maintenance=False)
        channel = RecordingChannel()
        channels = ChannelRegistry()
        channels.register(channel)
        sessions = CoreSessions(core)
        clock = Clock()
        heartbeat_md = tmp_path / "HEARTBEAT.md"

        async def no_sleep(_seconds: float) -> None:
            return None

        ports = SchedulerPorts(
            conversation=LocalConversation(lambda: core),
            channels=channels,
            sessions=sessions,
            agents=lambda: ["default"],
            default_agent="default",
            owner="local:ann",
            timezone_of=lambda _agent: "UTC",
            heartbeat_file=lambda _agent: heartbeat_md,
            clock=clock,
            sleep=no_sleep,
        )
        world = World(core, db, clock, channel, sessions, ports, heartbeat_md)
        made.append(world)
        return world

    yield make
    for world in made:
        await world.core.stop()
        await world.db.dispose()
