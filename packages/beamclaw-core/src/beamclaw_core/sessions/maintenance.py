"""Work outside turns: the TTL cleaner and idle/nightly maintenance compaction.

Every ``check_interval_seconds``: sessions idle for ``idle_compaction_minutes`` whose
view is above ``compaction_target_pct`` of the window are compacted once; at the local
``nightly_hour`` every such session is compacted. Every
``session_cleanup_interval_seconds`` sessions idle longer than ``session_ttl_seconds`` are
deleted (``0`` disables the TTL). A lane is only touched while it is idle.
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
from beamclaw_core.sessions.lane import SessionLane
from beamclaw_core.sessions.runtime import Runtime


class Maintenance:
    def __init__(
        self,
        runtime: Runtime,
        lanes: Callable[[], list[SessionLane]],
        lane_by_id: Callable[[str], Awaitable[SessionLane | None]],
    ) -> None:
        self.rt = runtime
        self._lanes = lanes
        self._lane_by_id = lane_by_id
        self._task: asyncio.Task[None] | None = None
        self._last_cleanup = 0.0
        self._last_nightly_day: dt.date | None = None
        self._compacted_idle: dict[str, float] = {}

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
        ttl = self.rt.settings.session_ttl_seconds
        if ttl > 0 and now - self._last_cleanup >= cfg.session_cleanup_interval_seconds:
            self._last_cleanup = now
            busy = {lane.id for lane in self._lanes() if not lane.idle()}
            for session_id in await self.rt.store.expire(before=now - ttl):
                logger.info("session {} expired (TTL {} s)", session_id, ttl)
                busy.discard(session_id)
        nightly = False
        if cfg.nightly_hour is not None:
            local = dt.datetime.fromtimestamp(now).astimezone()
            if local.hour == cfg.nightly_hour and self._last_nightly_day != local.date():
                self._last_nightly_day = local.date()
                nightly = True
        for lane in self._lanes():
            if not lane.idle():
                continue
            idle_for = now - lane.last_activity_at
            due = nightly or (
                cfg.idle_compaction_minutes is not None
                and idle_for >= cfg.idle_compaction_minutes * 60
                and self._compacted_idle.get(lane.id) != lane.last_activity_at
            )
            if due:
                await self.compact_if_large(lane, "nightly" if nightly else "idle")
                self._compacted_idle[lane.id] = lane.last_activity_at

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
