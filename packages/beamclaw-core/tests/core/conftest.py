"""Core-level tests: a real SQLite store, the scripted provider and virtual time.

:class:`VirtualTime` is the clock *and* the sleep given to ``Core.create``: every timer
of the core (collect debounce, retry backoff, approval timeout, turn deadline,
maintenance interval) waits until the test advances time, so nothing here sleeps for
real and no assertion depends on wall-clock speed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import heapq
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.loop import TurnEvent
from beamclaw_core.settings import CoreSettings
from beamclaw_memory import Database
from beamclaw_tools import Autonomy, SessionRef, ToolDef, ToolOutput, ToolRegistry

START = dt.datetime(2026, 3, 10, 12, 0).astimezone().timestamp()
"""Noon local time on an ordinary day: far from the daily-reset and nightly hours."""


class VirtualTime:
    """A clock and a sleep that only move when the test calls :meth:`advance`."""

    def __init__(self, start: float = START) -> None:
        self.now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = 0
        self._armed = asyncio.Event()

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._sleepers, (self.now + max(0.0, delay), self._seq, future))
        self._armed.set()
        await future

    def deadlines(self) -> list[float]:
        """Relative deadlines of the timers currently waiting, soonest first."""
        return sorted(d - self.now for d, _, f in self._sleepers if not f.done())

    async def until_timer(self, delay: float) -> None:
        """Wait until a timer ``delay`` seconds from now is armed (the code under test
        reached the point where it waits)."""
        while not any(abs(d - delay) < 1e-6 for d in self.deadlines()):
            self._armed.clear()
            await self._armed.wait()

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking every timer due on the way, in order."""
        target = self.now + seconds
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, _, future = heapq.heappop(self._sleepers)
            self.now = max(self.now, deadline)
            if not future.done():
                future.set_result(None)
                await asyncio.sleep(0)
        self.now = target
        await asyncio.sleep(0)

    def jump(self, seconds: float) -> None:
        """Move the clock without firing timers (time passing while nothing waits)."""
        self.now += seconds


class EchoTool:
    """Returns its ``text`` argument; records calls. ``gate`` holds it until set."""

    def __init__(
        self,
        name: str = "echo",
        *,
        approval: bool = False,
        min_autonomy: Autonomy = Autonomy.READ_ONLY,
        timeout: float = 5.0,
        gate: asyncio.Event | None = None,
        raises: Exception | None = None,
    ) -> None:
        self.definition = ToolDef(
            name=name,
            description=f"{name} tool",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            requires_approval=approval,
            min_autonomy=min_autonomy,
            timeout_seconds=timeout,
        )
        self.gate = gate
        self.raises = raises
        self.calls: list[dict[str, Any]] = []
        self.started = asyncio.Event()

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        self.calls.append(args)
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.raises is not None:
            raise self.raises
        return ToolOutput.ok(f"{self.definition.name}:{args.get('text', '')}")


def make_settings(
    *, queue: dict[str, Any] | None = None, loop: dict[str, Any] | None = None, **core: Any
) -> CoreSettings:
    data = CoreSettings().model_dump()
    data["agentic_loop"].update({"retry_base_delay_seconds": 0.0, **(loop or {})})
    data["queue"].update({"debounce_ms": 0, **(queue or {})})
    data["reset"].update({"daily_hour": None})
    for key, value in core.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return CoreSettings.model_validate(data)


async def collect(events: AsyncIterator[TurnEvent]) -> list[TurnEvent]:
    return [e async for e in events]


async def first(events: AsyncIterator[TurnEvent], kind: type) -> Any:
    async for event in events:
        if isinstance(event, kind):
            return event
    raise AssertionError(f"no {kind.__name__} before the stream ended")


async def until(predicate: Callable[[], Any]) -> None:
    """Wait for a condition no event announces (bounded by the test timeout)."""
    while not predicate():  # noqa: ASYNC110 - nothing to wait on but the condition
        await asyncio.sleep(0.005)


@pytest.fixture
def vt() -> VirtualTime:
    return VirtualTime()


@pytest.fixture
async def make_core(tmp_path: Path, vt: VirtualTime) -> AsyncIterator[Callable[..., Core]]:
    cores: list[Core] = []
    dbs: list[Database] = []

    def factory(
        provider: Any,
        *tools: Any,
        settings: CoreSettings | None = None,
        virtual: bool = True,
        **kw: Any,
    ) -> Core:
        registry = ToolRegistry()
        for t in tools:
            registry.register(t)
        db = Database(f"sqlite:///{tmp_path / 'core.db'}")
        dbs.append(db)
        if virtual:
            kw.setdefault("clock", vt.clock)
            kw.setdefault("sleep", vt.sleep)
        core = Core.create(
            settings or make_settings(),
            db,
            provider=provider,
            tools=registry,
            system_prompt="You are a test agent.",
            **kw,
        )
        cores.append(core)
        return core

    yield factory
    for core in cores:
        await core.stop()
    for db in dbs:
        await db.dispose()
