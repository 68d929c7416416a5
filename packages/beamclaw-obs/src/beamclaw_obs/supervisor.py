"""A small asyncio supervision primitive (OTP ``one_for_one`` in Python terms).

A :class:`Supervisor` runs children as tasks. When a child's coroutine ends abnormally
(raises) — or, for ``permanent`` children, ends at all — only that child is restarted
(one_for_one), after an exponential backoff. More than ``max_restarts`` restarts within
``window_seconds`` (MaxR/MaxT) gives the child up: it is marked ``failed``, a
``child_gave_up`` event is emitted and its ``on_give_up`` callback runs. Other children
are never affected. Cancelling a child (``stop_child``/``stop``) is a normal exit.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from loguru import logger

from beamclaw_obs.emitter import emit
from beamclaw_obs.errors import SupervisorError
from beamclaw_obs.events import EventType


class Restart(enum.StrEnum):
    """When a child is restarted (OTP restart types)."""

    PERMANENT = "permanent"  # always
    TRANSIENT = "transient"  # only after an abnormal exit (an exception)
    TEMPORARY = "temporary"  # never


class ChildState(enum.StrEnum):
    RUNNING = "running"
    RESTARTING = "restarting"
    STOPPED = "stopped"
    FAILED = "failed"


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: ``initial * factor**n`` capped at ``maximum`` seconds."""

    initial: float = 0.1
    factor: float = 2.0
    maximum: float = 30.0

    def delay(self, restart_number: int) -> float:
        return min(self.maximum, self.initial * self.factor ** max(0, restart_number - 1))


@dataclass(frozen=True)
class ChildSpec:
    """How to run one child. ``start`` returns a fresh coroutine on every (re)start."""

    id: str
    start: Callable[[], Awaitable[None]]
    restart: Restart = Restart.PERMANENT
    on_give_up: Callable[[BaseException | None], Awaitable[None] | None] | None = None


@dataclass
class ChildStatus:
    """Observable state of one child."""

    id: str
    state: ChildState
    restarts: int = 0
    last_error: str | None = None


@dataclass
class _Child:
    spec: ChildSpec
    status: ChildStatus
    task: asyncio.Task[None] | None = None
    history: deque[float] = field(default_factory=lambda: deque[float]())
    stopping: bool = False


class Supervisor:
    """Supervises children one_for_one with restart intensity ``max_restarts``/``window``."""

    def __init__(
        self,
        name: str,
        *,
        max_restarts: int = 5,
        window_seconds: float = 30.0,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.max_restarts = max_restarts
        self.window_seconds = window_seconds
        self.backoff = backoff or Backoff()
        self._clock = clock
        self._children: dict[str, _Child] = {}
        self._closed = False

    def start_child(self, spec: ChildSpec) -> None:
        """Start a child now. Raises :class:`SupervisorError` on a duplicate live id."""
        if self._closed:
            raise SupervisorError(f"supervisor {self.name} is stopped")
        existing = self._children.get(spec.id)
        if existing is not None and existing.status.state in (
            ChildState.RUNNING,
            ChildState.RESTARTING,
        ):
            raise SupervisorError(f"child {spec.id!r} already running under {self.name}")
        child = _Child(spec=spec, status=ChildStatus(id=spec.id, state=ChildState.RUNNING))
        self._children[spec.id] = child
        child.task = asyncio.create_task(self._run(child), name=f"{self.name}/{spec.id}")
        emit(EventType.CHILD_STARTED, supervisor=self.name, child=spec.id)

    async def stop_child(self, child_id: str) -> None:
        """Cancel a child and wait for it; it will not be restarted."""
        child = self._children.get(child_id)
        if child is None:
            raise SupervisorError(f"no child {child_id!r} under {self.name}")
        child.stopping = True
        if child.task is not None and not child.task.done():
            child.task.cancel()
            await asyncio.gather(child.task, return_exceptions=True)
        child.status.state = ChildState.STOPPED

    def remove_child(self, child_id: str) -> None:
        """Forget a child that is no longer running."""
        child = self._children.get(child_id)
        if child is not None and child.task is not None and not child.task.done():
            raise SupervisorError(f"child {child_id!r} is still running")
        self._children.pop(child_id, None)

    def status(self) -> dict[str, ChildStatus]:
        return {cid: c.status for cid, c in self._children.items()}

    def child_status(self, child_id: str) -> ChildStatus | None:
        """One child's status (O(1), unlike :meth:`status`), or None if unknown."""
        child = self._children.get(child_id)
        return None if child is None else child.status

    def has_child(self, child_id: str) -> bool:
        return child_id in self._children

    async def stop(self) -> None:
        """Stop every child (in reverse start order) and refuse new ones."""
        self._closed = True
        for child_id in reversed(list(self._children)):
            await self.stop_child(child_id)

    async def _run(self, child: _Child) -> None:
        spec = child.spec
        while True:
            error: BaseException | None = None
            try:
                child.status.state = ChildState.RUNNING
                await spec.start()
            except asyncio.CancelledError:
                if child.stopping:
                    child.status.state = ChildState.STOPPED
                    raise
                error = RuntimeError("child task cancelled from outside")
            except Exception as exc:
                error = exc
            if child.stopping:
                child.status.state = ChildState.STOPPED
                return
            abnormal = error is not None
            if spec.restart is Restart.TEMPORARY or (
                spec.restart is Restart.TRANSIENT and not abnormal
            ):
                child.status.state = ChildState.STOPPED
                return
            if error is not None:
                child.status.last_error = f"{type(error).__name__}: {error}"
                logger.warning("{}/{} crashed: {}", self.name, spec.id, child.status.last_error)
            now = self._clock()
            child.history.append(now)
            while child.history and now - child.history[0] > self.window_seconds:
                child.history.popleft()
            if len(child.history) > self.max_restarts:
                child.status.state = ChildState.FAILED
                emit(
                    EventType.CHILD_GAVE_UP,
                    supervisor=self.name,
                    child=spec.id,
                    error=child.status.last_error,
                )
                logger.error(
                    "{}/{} gave up after {} restarts in {:g}s",
                    self.name,
                    spec.id,
                    self.max_restarts,
                    self.window_seconds,
                )
                if spec.on_give_up is not None:
                    result = spec.on_give_up(error)
                    if result is not None:
                        await result
                return
            child.status.restarts += 1
            child.status.state = ChildState.RESTARTING
            delay = self.backoff.delay(len(child.history))
            emit(
                EventType.CHILD_RESTARTED,
                supervisor=self.name,
                child=spec.id,
                restarts=child.status.restarts,
                delay_s=delay,
                error=child.status.last_error,
            )
            await asyncio.sleep(delay)
