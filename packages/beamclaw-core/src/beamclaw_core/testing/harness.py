"""A ready-made harness for tests of code that embeds :class:`~beamclaw_core.api.Core`.

* :class:`EchoTool` — a tool that echoes its ``text`` argument, with knobs for approval,
  autonomy, delay, a gate that holds it, and an exception to raise.
* :class:`VirtualTime` — a clock *and* a sleep for ``Core.create(clock=, sleep=)`` that
  only move when the test advances them, so timer-driven behaviour (debounce, backoff,
  approval timeouts, turn deadlines, maintenance) is tested without waiting.
* :func:`quiet_core_settings` — ``[core]`` settings without debounce, retry delay or
  automatic resets (daily hour, session TTL), so tests see exactly the behaviour they
  ask for.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import heapq
from typing import Any

from beamclaw_core.settings import CoreSettings
from beamclaw_tools import Autonomy, SessionRef, ToolDef, ToolOutput

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
    """Returns ``<name>:<text>``; records calls in order.

    Args:
        name: the tool's name.
        approval: ``requires_approval``.
        min_autonomy: the least autonomy that may run it.
        timeout: ``timeout_seconds``.
        delay: seconds to sleep before answering.
        gate: when given, the tool waits for it before answering.
        raises: when given, the tool raises it (after the gate).
    """

    def __init__(
        self,
        name: str = "echo",
        *,
        approval: bool = False,
        min_autonomy: Autonomy = Autonomy.READ_ONLY,
        timeout: float = 5.0,
        delay: float = 0.0,
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
        self.delay = delay
        self.gate = gate
        self.raises = raises
        self.calls: list[dict[str, Any]] = []
        self.started = asyncio.Event()

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        self.calls.append(args)
        self.started.set()
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.gate is not None:
            await self.gate.wait()
        if self.raises is not None:
            raise self.raises
        return ToolOutput.ok(f"{self.definition.name}:{args.get('text', '')}")


def quiet_core_settings(
    *, queue: dict[str, Any] | None = None, loop: dict[str, Any] | None = None, **core: Any
) -> CoreSettings:
    """Default ``[core]`` settings minus debounce, retry delay and the automatic resets
    (daily hour; the session TTL's idle reset).

    ``queue``/``loop`` update ``[core.queue]``/``[core.agentic_loop]``; other keywords
    update (or, for sub-sections given as dicts, merge into) ``[core]``.
    """
    data = CoreSettings().model_dump()
    data["agentic_loop"].update({"retry_base_delay_seconds": 0.0, **(loop or {})})
    data["queue"].update({"debounce_ms": 0, **(queue or {})})
    data["reset"].update({"daily_hour": None})
    data["session_ttl_seconds"] = 0
    for key, value in core.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return CoreSettings.model_validate(data)
