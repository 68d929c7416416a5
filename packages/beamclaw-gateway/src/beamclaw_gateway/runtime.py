"""The gateway's runtime: components started in order, stopped in reverse.

Start order: home directory → logging → obs backends → database (reachable, migrated).
Each later issue's component (sessions, MCP servers, channels, scheduler) joins this list;
``/ready`` is true only once every critical component is up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.providers import Provider
from beamclaw_gateway.composition import AgentSystem, warm_provider_stack
from beamclaw_gateway.config import BeamclawConfig
from beamclaw_gateway.errors import GatewayNotStartedError
from beamclaw_gateway.gc_tuning import GcTuning, paused_for_startup
from beamclaw_gateway.heap_trim import HeapTrimmer
from beamclaw_memory import Database, resolve_database_url
from beamclaw_obs import (
    ComponentHealth,
    EventType,
    HealthRegistry,
    HealthState,
    LogBackend,
    MetricsBackend,
    configure_logging,
    emit,
    ensure_home,
    get_emitter,
)


class GatewayRuntime:
    """Everything a running gateway owns. ``start``/``stop`` are idempotent."""

    def __init__(
        self,
        config: BeamclawConfig,
        *,
        home: Path | None = None,
        provider_factory: Callable[[str], Provider] | None = None,
        database_factory: Callable[[str], Database] = Database,
    ) -> None:
        """``database_factory`` opens the database from its URL (tests pass
        ``beamclaw_core.testing.FailingDatabase`` to make store writes fail on demand)."""
        from beamclaw_obs import beamclaw_home

        self.config = config
        self.home = home or beamclaw_home()
        self.health = HealthRegistry()
        self.metrics: MetricsBackend | None = None
        self.database: Database | None = None
        self.system: AgentSystem | None = None
        self.started_monotonic = time.monotonic()
        self._provider_factory = provider_factory
        self._database_factory = database_factory
        self._started = False
        self._gc: GcTuning | None = None
        self.heap_trim: HeapTrimmer | None = None
        """Gives freed heap memory back to the OS while started (:mod:`.heap_trim`)."""
        self._db_state = ComponentHealth(HealthState.STARTING)
        self._warming: asyncio.Task[None] | None = None
        """The provider stack's import, in a worker thread once listening (:meth:`warm`)."""

    @property
    def uptime_seconds(self) -> float:
        return time.monotonic() - self.started_monotonic

    @property
    def started(self) -> bool:
        return self._started

    @property
    def core(self) -> Core:
        """The running agent core (only valid between ``start`` and ``stop``)."""
        if self.system is None:
            raise GatewayNotStartedError("the gateway runtime is not started")
        return self.system.core

    async def start(self) -> None:
        if self._started:
            return
        ensure_home(self.home)
        obs = self.config.obs
        configure_logging(
            self.home / "logs",
            stderr_level=obs.log_level,
            file_level=obs.file_log_level,
            rotation=obs.log_rotation,
            retention=obs.log_retention,
        )
        emitter = get_emitter()
        emitter.add_backend(LogBackend(), queue_size=obs.queue_size)
        if obs.metrics_enabled:
            self.metrics = MetricsBackend(stats=emitter.stats)
            emitter.add_backend(self.metrics, queue_size=obs.queue_size)
        self.health.register("database", lambda: self._db_state, critical=True)
        url = resolve_database_url(self.config.memory.database_url, self.home)
        self.database = self._database_factory(url)
        await self.database.check()
        heads = await self.database.migrate()
        self._db_state = ComponentHealth(
            HealthState.UP,
            data={"url": self.database.display_url, "migrations": heads},
        )
        logger.info(
            "database ready: {} ({} migration heads)", self.database.display_url, len(heads)
        )
        self.system = AgentSystem(
            self.config, self.database, provider_factory=self._provider_factory
        )
        self.system.register_health(self.health)
        await self.system.start()
        self._started = True
        gateway = self.config.gateway
        self._gc = GcTuning(threshold=gateway.gc_threshold, freeze=gateway.gc_freeze)
        if not paused_for_startup():
            self._gc.apply()  # else once listening and warm (:meth:`warm`)
        core = self.system.core
        self.heap_trim = HeapTrimmer(
            gateway.heap_trim_seconds, quiet=lambda: not core.turns_running()
        )
        self.heap_trim.start()
        emit(EventType.GATEWAY_START, home=str(self.home))

    def warm(self) -> None:
        """Import the provider stack in a worker thread (once): called when the listener
        is up, so the import does not compete with the start-up for the interpreter, and
        the first turn does not pay it. A start-up that paused the collector
        (:func:`~beamclaw_gateway.gc_tuning.pause_for_startup`) gets its tuning then."""
        if self._started and self._warming is None:
            self._warming = asyncio.create_task(self._warm())

    async def _warm(self) -> None:
        await asyncio.to_thread(warm_provider_stack)
        if self._gc is not None:
            self._gc.apply()  # idempotent

    async def stop(self) -> None:
        if self.heap_trim is not None:
            await self.heap_trim.stop()
            self.heap_trim = None
        if self._warming is not None:
            await self._warming  # an import in a thread cannot be cancelled; it is short
            self._warming = None
        if self._started:
            emit(EventType.GATEWAY_STOP)
        if self.system is not None:
            await self.system.stop()
            self.system = None
        if self.database is not None:
            await self.database.dispose()
            self.database = None
        self._db_state = ComponentHealth(HealthState.DOWN, "stopped")
        emitter = get_emitter()
        emitter.remove_backend("metrics")
        emitter.remove_backend("log")
        self._started = False
        if self._gc is not None:
            self._gc.undo()
            self._gc = None
