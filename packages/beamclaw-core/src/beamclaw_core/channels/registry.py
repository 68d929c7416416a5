"""The channels of a running gateway: registered by name, each run supervised, reachable
for delivery by anything above core (the gateway's routes, the scheduler, heartbeats)
without importing the gateway.

Supervision (DESIGN.md §2: one failing channel never stalls or kills another):

* each adapter's ``run`` is its own task; when it raises or returns while the registry
  runs, it is restarted after an exponential backoff;
* more than ``max_restarts`` failures within ``window_seconds`` do not give the channel
  up for good: it *cools down* for ``cooldown_seconds`` and is then started again, with a
  fresh failure count (a platform that was down for an hour comes back by itself);
* every state change is visible in :meth:`ChannelRegistry.health` (``/health``): running,
  restarting, cooling down, with the restart count and the last error.

A channel registered while the registry runs starts at once; :meth:`stop` cancels every
run and waits for it.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from loguru import logger

from beamclaw_core.channels.adapter import ChannelAdapter
from beamclaw_core.channels.errors import DuplicateChannelError, UnknownChannelError
from beamclaw_core.channels.types import InboundSink, Outbound, Receipt
from beamclaw_core.loop.turn_events import ApprovalRequested
from beamclaw_obs import Backoff, ComponentHealth, HealthState


class RunState(enum.StrEnum):
    IDLE = "idle"
    """Registered; the registry is not running."""
    RUNNING = "running"
    RESTARTING = "restarting"
    COOLING_DOWN = "cooling_down"
    STOPPED = "stopped"


@dataclass
class ChannelRun:
    """One adapter's supervised run, as ``/health`` shows it."""

    state: RunState = RunState.IDLE
    restarts: int = 0
    last_error: str | None = None
    failures: deque[float] = field(default_factory=lambda: deque[float]())
    task: asyncio.Task[None] | None = None


@dataclass(frozen=True)
class ChannelSupervision:
    """How crashing channels are restarted."""

    max_restarts: int = 5
    window_seconds: float = 60.0
    backoff: Backoff = field(default_factory=lambda: Backoff(initial=0.5, maximum=30.0))
    cooldown_seconds: float = 300.0


class ChannelRegistry:
    """The registered channels, by name (see the module invariants)."""

    def __init__(
        self,
        supervision: ChannelSupervision | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.supervision = supervision or ChannelSupervision()
        self._clock = clock
        self._sleep = sleep
        self._adapters: dict[str, ChannelAdapter] = {}
        self._runs: dict[str, ChannelRun] = {}
        self._inbound: InboundSink | None = None

    # ------------------------------------------------------------ membership

    def register(self, adapter: ChannelAdapter) -> None:
        """Add ``adapter``; it starts now when the registry runs."""
        if adapter.name in self._adapters:
            raise DuplicateChannelError(adapter.name)
        self._adapters[adapter.name] = adapter
        self._runs[adapter.name] = ChannelRun()
        if self._inbound is not None:
            self._start(adapter.name)

    async def unregister(self, name: str) -> None:
        """Stop ``name``'s run and forget it (unknown names are ignored)."""
        run = self._runs.pop(name, None)
        self._adapters.pop(name, None)
        if run is not None:
            await _cancel(run)

    def names(self) -> list[str]:
        return sorted(self._adapters)

    def get(self, name: str) -> ChannelAdapter:
        adapter = self._adapters.get(name)
        if adapter is None:
            raise UnknownChannelError(name)
        return adapter

    def run_of(self, name: str) -> ChannelRun:
        self.get(name)
        return self._runs[name]

    # ------------------------------------------------------------ use

    async def deliver(self, name: str, target: str, out: Outbound | str) -> Receipt:
        """Deliver to ``target`` on channel ``name`` (text alone is an :class:`Outbound`).

        Raises :class:`UnknownChannelError`, or the adapter's ``UnknownTargetError``."""
        message = Outbound(out) if isinstance(out, str) else out
        return await self.get(name).deliver(target, message)

    async def ask_approval(self, name: str, target: str, request: ApprovalRequested) -> None:
        await self.get(name).ask_approval(target, request)

    # ------------------------------------------------------------ life

    def start(self, inbound: InboundSink) -> None:
        """Run every registered adapter, handing what people send to ``inbound``."""
        self._inbound = inbound
        for name in self._adapters:
            self._start(name)

    async def stop(self) -> None:
        """Cancel every run and wait for it; channels stay registered."""
        self._inbound = None
        for run in self._runs.values():
            await _cancel(run)

    def _start(self, name: str) -> None:
        run = self._runs[name]
        if run.task is None or run.task.done():
            run.task = asyncio.get_running_loop().create_task(
                self._supervise(name, run), name=f"channel-{name}"
            )

    async def _supervise(self, name: str, run: ChannelRun) -> None:
        sup = self.supervision
        adapter = self._adapters[name]
        while self._inbound is not None:
            run.state = RunState.RUNNING
            try:
                await adapter.run(self._inbound)
                error = f"{name}: run returned while the gateway runs"
            except asyncio.CancelledError:
                run.state = RunState.STOPPED
                raise
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            now = self._clock()
            run.restarts += 1
            run.last_error = error
            run.failures.append(now)
            while run.failures and run.failures[0] < now - sup.window_seconds:
                run.failures.popleft()
            if len(run.failures) > sup.max_restarts:
                logger.error(
                    "channel {} failed {} times in {:g} s ({}); cooling down for {:g} s",
                    name,
                    len(run.failures),
                    sup.window_seconds,
                    error,
                    sup.cooldown_seconds,
                )
                run.state = RunState.COOLING_DOWN
                run.failures.clear()
                await self._sleep(sup.cooldown_seconds)
            else:
                logger.warning("channel {} crashed ({}); restarting", name, error)
                run.state = RunState.RESTARTING
                await self._sleep(sup.backoff.delay(len(run.failures)))
        run.state = RunState.STOPPED

    # ------------------------------------------------------------ health

    def health(self) -> ComponentHealth:
        """``up`` with each channel's run and own view; ``degraded`` when one is not
        running or reports itself down."""
        data: dict[str, object] = {}
        degraded: list[str] = []
        for name in self.names():
            run, own = self._runs[name], self._adapters[name].health()
            data[name] = {
                **own.as_dict(),
                "run": run.state.value,
                "restarts": run.restarts,
                "last_error": run.last_error,
            }
            running = run.state in (RunState.RUNNING, RunState.IDLE)
            if not running or own.state == HealthState.DOWN:
                degraded.append(name)
        if degraded:
            return ComponentHealth(
                HealthState.DEGRADED, f"channel not running: {', '.join(degraded)}", data
            )
        return ComponentHealth(HealthState.UP, data=data)


async def _cancel(run: ChannelRun) -> None:
    task = run.task
    if task is not None and not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    run.state = RunState.STOPPED
