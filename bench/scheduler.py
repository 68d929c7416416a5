"""Scheduler throughput: ``DUE`` of ``JOBS`` stored jobs due at once, fired per second.

In process, as the scheduler's own tests run it: a real :class:`Core` (SQLite file,
scripted provider answering at once), the real :class:`JobStore` and :class:`Scheduler`
on a clock the bench moves (``tick()`` called by the bench, not by a timer). Reported:

* ``create_jobs_per_s``: ``Scheduler.create`` of ``JOBS`` jobs, one after another;
* ``idle_tick_ms``: one tick over ``JOBS`` jobs none of which is due (the scan every
  ``tick_seconds`` costs), median of 5;
* ``fired_per_s``: the clock moved past the hourly jobs' time, one tick claims and
  starts every due job and ``settle()`` waits for every fire's turn to end: jobs fired /
  that time (``claim_tick_s``: the tick alone); ``fired``: how many fired (``DUE``);
* ``direct_turns_per_s``: the baseline, in the same run: as many one-turn isolated
  sessions sent straight to the same core at once; ``fired_vs_direct`` the ratio.

``BENCH_QUICK=1`` uses 200 due of 2,000.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.channels import ChannelRegistry
from beamclaw_core.conversation import LocalConversation
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import Reply, ScriptedProvider, quiet_core_settings
from beamclaw_memory import Database
from beamclaw_scheduler import JobRequest, JobStore, Scheduler, SchedulerPorts, SchedulerSettings
from beamclaw_tools import ToolRegistry
from bench._drive import QUICK

JOBS = 10_000 if not QUICK else 2_000
DUE = 1_000 if not QUICK else 200
"""Of the ``JOBS`` stored, how many are due at the measured instant (hourly); the rest
are daily, due later: the tick scans all of them."""
T0 = 1_800_000_000.0


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class _Sessions:
    def __init__(self, core: Core) -> None:
        self.core = core

    def derive(self, address: SessionAddress) -> str:
        return self.core.session_id(address)

    async def busy(self, session_id: str) -> bool:
        return False

    async def forget(self, session_id: str) -> None:
        await self.core.delete(session_id)


async def _no_sleep(_seconds: float) -> None:
    return None


async def run() -> dict[str, Any]:
    logger.disable("beamclaw_scheduler")  # an INFO line per created job
    out: dict[str, Any] = {"jobs": JOBS, "due": DUE}
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'sched.db'}")
        provider = ScriptedProvider([Reply("done")], repeat_last=True)
        core = Core.create(
            quiet_core_settings(),
            db,
            provider=provider,
            tools=ToolRegistry(),
            system_prompt="bench",
        )
        await core.start(maintenance=False)
        clock = _Clock()
        ports = SchedulerPorts(
            conversation=LocalConversation(lambda: core),
            channels=ChannelRegistry(),
            sessions=_Sessions(core),
            agents=lambda: ["default"],
            default_agent="default",
            owner="local:bench",
            timezone_of=lambda _agent: "UTC",
            heartbeat_file=lambda _agent: Path(tmp) / "HEARTBEAT.md",
            clock=clock,
            sleep=_no_sleep,
        )
        settings = SchedulerSettings(
            enabled=True, min_interval_seconds=1, max_jobs_per_agent=JOBS + 1
        )
        scheduler = Scheduler(settings, JobStore(db, clock), ports)
        try:
            start = time.perf_counter()
            for i in range(JOBS):
                every = 3600 if i < DUE else 86_400
                await scheduler.create(JobRequest(prompt=f"job {i}", every_seconds=every))
            out["create_jobs_per_s"] = round(JOBS / (time.perf_counter() - start), 1)
            ticks: list[float] = []
            for _ in range(5):
                start = time.perf_counter()
                await scheduler.tick()
                ticks.append(time.perf_counter() - start)
            out["idle_tick_ms"] = round(statistics.median(ticks) * 1000, 2)
            provider.calls.clear()
            clock.now = T0 + 3600
            start = time.perf_counter()
            await scheduler.tick()
            out["claim_tick_s"] = round(time.perf_counter() - start, 2)
            await scheduler.settle()
            elapsed = time.perf_counter() - start
            out["fired"] = len(provider.calls)
            out["fired_per_s"] = round(out["fired"] / elapsed, 1)
            provider.calls.clear()
            start = time.perf_counter()

            async def one(i: int) -> None:
                address = SessionAddress(f"local:direct{i}", "default", "bench")
                await (await core.send(address, f"turn {i}", drafts=False)).text()

            await asyncio.gather(*(one(i) for i in range(DUE)))
            out["direct_turns_per_s"] = round(DUE / (time.perf_counter() - start), 1)
            out["fired_vs_direct"] = round(out["fired_per_s"] / out["direct_turns_per_s"], 3)
        finally:
            await scheduler.stop()
            await core.stop()
            await db.dispose()
    return out
