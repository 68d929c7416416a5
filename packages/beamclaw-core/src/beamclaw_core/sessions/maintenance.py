"""Work outside turns: idle lane eviction, history retention, idle/nightly compaction.

Every ``check_interval_seconds``:

* sessions idle for ``idle_compaction_minutes`` whose view is above
  ``compaction_target_pct`` of the window are compacted once per idle period; at the
  local ``nightly_hour`` every session active in this process is. A session whose lane
  was evicted meanwhile stays owed its idle check (its lane is rebuilt for it).
* lanes idle for ``lane_idle_seconds`` leave memory (``Core`` decides which may). The
  C heap pages they free go back to the system with the gateway's periodic trim, not
  here: a trim holds the allocator's lock for 10-40 ms, and a pass evicts often under
  load (trimming after each stalled streams in ``bench streams``). Evicted lanes are
  reference cycles: a full collection frees them once enough have piled up, at a pass
  with no turn running when one comes soon enough
  (:class:`~beamclaw_core.sessions.cycle_sweep.CycleSweep`).
* every ``session_cleanup_interval_seconds``, only when ``[core] history_retention_days``
  is set: sessions last active longer ago than that are deleted with their history.
  Nothing else is ever deleted here: the session TTL only ends a session's *context*,
  lazily at its next message (:func:`~beamclaw_core.sessions.runtime.reset_due`).

A lane is only compacted while it is idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import Awaitable, Callable

from loguru import logger

from beamclaw_core.loop.turn_events import Compacted
from beamclaw_core.providers import estimate_message_tokens
from beamclaw_core.sessions.compacting import compact_lane
from beamclaw_core.sessions.cycle_sweep import CycleSweep
from beamclaw_core.sessions.lane import SessionLane, any_turn_running
from beamclaw_core.sessions.runtime import Runtime

DAY_SECONDS = 86400


class Maintenance:
    """The periodic maintenance task of one :class:`~beamclaw_core.api.Core`.

    ``delete_inactive(before)`` and ``evict_idle(idle_seconds)`` are Core's: they change
    its map of lanes under its lock and return the ids they removed.
    """

    def __init__(
        self,
        runtime: Runtime,
        lanes: Callable[[], list[SessionLane]],
        lane_by_id: Callable[[str], Awaitable[SessionLane | None]],
        *,
        delete_inactive: Callable[[float], Awaitable[list[str]]],
        evict_idle: Callable[[float], Awaitable[list[str]]],
    ) -> None:
        self.rt = runtime
        self._lanes = lanes
        self._lane_by_id = lane_by_id
        self._delete_inactive = delete_inactive
        self._evict_idle = evict_idle
        self._task: asyncio.Task[None] | None = None
        self._last_cleanup = 0.0
        self._last_nightly_day: dt.date | None = None
        self._owed: dict[str, float] = {}
        """Session id -> the last activity not yet idle-checked (lane loaded or not)."""
        self._checked: dict[str, float] = {}
        """Loaded lanes' last activity already idle-checked (pruned with the lanes)."""
        self.sweep = CycleSweep()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="core/maintenance")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        interval = self.rt.settings.maintenance.check_interval_seconds
        while True:
            await self.rt.sleep(interval)
            try:
                await self.tick()
            except Exception as e:  # maintenance must never die; it retries next tick
                logger.warning("maintenance pass failed: {}", e)

    async def tick(self) -> None:
        """One maintenance pass (public for tests and the CLI)."""
        now = self.rt.clock()
        cfg = self.rt.settings.maintenance
        await self._retention(now)
        nightly = False
        if cfg.nightly_hour is not None:
            local = dt.datetime.fromtimestamp(now).astimezone()
            if local.hour == cfg.nightly_hour and self._last_nightly_day != local.date():
                self._last_nightly_day = local.date()
                nightly = True
        if cfg.idle_compaction_minutes is not None or cfg.nightly_hour is not None:
            await self._compaction(now, nightly, cfg.idle_compaction_minutes)
        evicted = await self._evict_idle(cfg.lane_idle_seconds)
        if evicted:
            await asyncio.sleep(0)  # the stopped workers' done callbacks, which hold lanes
        if evicted or self.sweep.pending:  # a pass deferred while turns ran: quiet now?
            lanes = self._lanes()
            self.sweep.evicted(len(evicted), loaded=len(lanes), busy=any_turn_running(lanes))

    async def _retention(self, now: float) -> None:
        days = self.rt.settings.history_retention_days
        interval = self.rt.settings.maintenance.session_cleanup_interval_seconds
        if not days or now - self._last_cleanup < interval:
            return
        self._last_cleanup = now
        for session_id in await self._delete_inactive(now - days * DAY_SECONDS):
            logger.info("session {} deleted: inactive for more than {} days", session_id, days)
            self._owed.pop(session_id, None)
            self._checked.pop(session_id, None)

    async def _compaction(self, now: float, nightly: bool, idle_minutes: int | None) -> None:
        loaded = self._lanes()
        self._checked = {
            lane.id: self._checked[lane.id] for lane in loaded if lane.id in self._checked
        }
        for lane in loaded:
            if self._checked.get(lane.id) != lane.last_activity_at:
                self._owed[lane.id] = lane.last_activity_at
        due = [
            session_id
            for session_id, last in self._owed.items()
            if nightly or (idle_minutes is not None and now - last >= idle_minutes * 60)
        ]
        if nightly:
            due += [lane.id for lane in loaded if lane.id not in self._owed]
        for session_id in due:
            lane = await self._lane_by_id(session_id)
            if lane is None:
                self._owed.pop(session_id, None)
                continue
            if not lane.idle():
                continue
            await self.compact_if_large(lane, "nightly" if nightly else "idle")
            self._owed.pop(session_id, None)
            self._checked[session_id] = lane.last_activity_at

    async def compact_if_large(self, lane: SessionLane, reason: str) -> bool:
        provider = self.rt.provider_for(lane.agent_id)
        window = self.rt.context_window_for(provider)
        view = await lane.view.get()
        tokens = sum(estimate_message_tokens(m) for m in view.messages)
        target = window * self.rt.settings.agentic_loop.compaction_target_pct // 100
        if tokens <= target:
            return False
        done = await compact_lane(lane, window, reason=reason)
        lane.publish(
            Compacted(
                lane.id,
                None,
                done.before_tokens,
                done.after_tokens,
                done.summarized_messages,
                done.fallback,
            )
        )
        return True
