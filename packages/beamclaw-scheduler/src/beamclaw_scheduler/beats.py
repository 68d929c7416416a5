"""Heartbeats: each agent's periodic check-in, run by the scheduler's runner.

Every ``explore_every``-th beat may instead explore a topic of ``CURIOSITY.md``
(:mod:`~.exploration`), under the fetch cap (:mod:`~.fetch_cap`); its spend counts like
any beat's. The beat's prompt lists ``HEARTBEAT.md``'s task lines and the open tasks of the agent's
own ``TASKS.md`` (:mod:`~.task_links`), which it reviews.
A beat runs in the agent's heartbeat session (``heartbeat-<agent>``, the gateway owner's),
never in the person's conversation, and only when :func:`~.heartbeat.decide` says so — an
agent whose ``HEARTBEAT.md`` lists no task makes no LLM call at all. A quiet answer
(``HEARTBEAT_OK``) is neither delivered nor kept: the heartbeat session is deleted with
its history, so the next beat starts from nothing again and nothing idle accumulates. Any
other answer is delivered to ``deliver_to`` and stays in that session (the next beat sees
what it already reported). Beat times live in memory: after a restart the first beat
comes one interval after start (a beat is a check-in, not an appointment).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from loguru import logger

from beamclaw_core import HeartbeatSettings
from beamclaw_core.conversation import TurnRequest
from beamclaw_core.sessions import SessionAddress, TurnResult
from beamclaw_core.workspace import Task, write_atomic
from beamclaw_obs import cancel_and_wait
from beamclaw_scheduler.delivery import deliver
from beamclaw_scheduler.executor import local_day
from beamclaw_scheduler.exploration import (
    CURIOSITY_FILENAME,
    EXPLORATIONS_DIRNAME,
    explored,
    is_exploration,
    note,
    note_path,
    pick_topic,
    topics,
)
from beamclaw_scheduler.exploration import prompt as exploration_prompt
from beamclaw_scheduler.fetch_cap import FetchQuota
from beamclaw_scheduler.heartbeat import BeatState, decide, is_quiet, prompt, task_lines
from beamclaw_scheduler.ports import SchedulerPorts
from beamclaw_scheduler.specs import parse_hours
from beamclaw_scheduler.store import JobStore
from beamclaw_scheduler.tasks_file import read_open_tasks

CHANNEL = "heartbeat"


def _task_line(task: Task) -> str:
    marker = f" [scheduled:{task.schedule_id}]" if task.schedule_id else ""
    return task.text + marker


def heartbeat_session(agent_id: str) -> str:
    return f"heartbeat-{agent_id}"


@dataclass
class BeatRecord:
    """One agent's heartbeat as ``/health`` shows it."""

    next_at: float
    last_beat_at: float | None = None
    last_skip: str | None = None
    last_result: str | None = None
    """``quiet``, ``delivered``, ``failed: …``."""
    failures: int = 0
    beats: int = 0
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    def view(self) -> dict[str, object]:
        return {
            "next_at": self.next_at,
            "last_beat_at": self.last_beat_at,
            "last_skip": self.last_skip,
            "last_result": self.last_result,
            "failures": self.failures,
            "beats": self.beats,
        }


class Heartbeats:
    """Every agent's beats (see the module)."""

    def __init__(
        self,
        ports: SchedulerPorts,
        store: JobStore,
        settings: HeartbeatSettings,
        per_agent: dict[str, HeartbeatSettings | None],
    ) -> None:
        self._ports = ports
        self._store = store
        self._settings = settings
        self._per_agent = per_agent
        self.records: dict[str, BeatRecord] = {}
        self.fetches = FetchQuota()
        """The fetch cap of exploration beats (the gateway wraps the fetching tools in it:
        :class:`~.fetch_cap.CappedTool`)."""

    def settings_of(self, agent_id: str) -> HeartbeatSettings:
        return self._settings.overridden_by(self._per_agent.get(agent_id))

    def agents(self) -> list[str]:
        """Agents that beat: the default one and every ``[agents.<id>]`` that exists."""
        known = set(self._ports.agents())
        wanted = {self._ports.default_agent, *self._per_agent}
        return sorted(wanted & known)

    async def tick(self) -> None:
        """Start each beat that is due and allowed (never waits for one)."""
        now = self._ports.clock()
        for agent_id in self.agents():
            settings = self.settings_of(agent_id)
            record = self.records.setdefault(agent_id, BeatRecord(now + settings.every_seconds))
            topic = self._topic(agent_id, settings, record, now)
            state = await self._state(agent_id, settings, record, now, exploring=topic is not None)
            reason = decide(state)
            if reason == "not_due":
                continue
            record.next_at = now + settings.every_seconds
            record.last_skip = reason
            if reason is None:
                record.last_beat_at = now
                record.beats += 1
                when = datetime.fromtimestamp(now, ZoneInfo(self._zone(agent_id)))
                local = when.strftime("%Y-%m-%d %H:%M %Z")
                if topic is not None:
                    work = self._explore(agent_id, settings, record, topic, local, when)
                else:
                    tasks = task_lines(self._read(agent_id))
                    mine = [_task_line(t) for t in read_open_tasks(self._ports, agent_id)]
                    work = self._beat(agent_id, settings, record, prompt(tasks, local, mine))
                record.task = asyncio.create_task(work, name=f"heartbeat-{agent_id}")

    async def stop(self) -> None:
        await cancel_and_wait(
            [r.task for r in self.records.values() if r.task is not None and not r.task.done()]
        )

    def resume(self, agent_id: str) -> None:
        """Lift a pause after failures."""
        record = self.records.get(agent_id)
        if record is not None:
            record.failures = 0

    # ------------------------------------------------------------ internals

    def _zone(self, agent_id: str) -> str:
        return self._ports.timezone_of(agent_id)

    def _read(self, agent_id: str) -> str:
        try:
            return self._ports.heartbeat_file(agent_id).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    async def _state(
        self,
        agent_id: str,
        settings: HeartbeatSettings,
        record: BeatRecord,
        now: float,
        *,
        exploring: bool = False,
    ) -> BeatState:
        due = now >= record.next_at
        tz = ZoneInfo(self._zone(agent_id))
        hours = (
            parse_hours(settings.active_hours, "active_hours") if settings.active_hours else None
        )
        running = record.task is not None and not record.task.done()
        if not (due and settings.enabled) or running:
            busy, tasks, over = False, 0, False
        else:
            person = self._ports.sessions.derive(SessionAddress(self._ports.owner, agent_id))
            busy = await self._ports.sessions.busy(person)
            tasks = len(task_lines(self._read(agent_id)))
            tasks += len(read_open_tasks(self._ports, agent_id)) + int(exploring)
            over = await self._over_cap(agent_id, settings, now) if tasks else False
        return BeatState(
            enabled=settings.enabled,
            due=due,
            local_time=datetime.fromtimestamp(now, tz).time(),
            active_hours=hours,
            beat_running=running,
            session_busy=busy,
            paused=record.failures >= settings.max_failures,
            over_cap=over,
            tasks=tasks,
        )

    async def _over_cap(self, agent_id: str, settings: HeartbeatSettings, now: float) -> bool:
        if settings.daily_cost_cap_usd is None and settings.daily_token_cap is None:
            return False
        tokens, cost = await self._store.spent(agent_id, local_day(now, self._zone(agent_id)))
        if settings.daily_token_cap is not None and tokens >= settings.daily_token_cap:
            return True
        return settings.daily_cost_cap_usd is not None and cost >= settings.daily_cost_cap_usd

    def _topic(
        self, agent_id: str, settings: HeartbeatSettings, record: BeatRecord, now: float
    ) -> str | None:
        """The topic this beat explores, when it is an exploration's turn and one is new."""
        if now < record.next_at or not is_exploration(record.beats + 1, settings.explore_every):
            return None
        workspace = self._ports.heartbeat_file(agent_id).parent
        try:
            curiosity = (workspace / CURIOSITY_FILENAME).read_text(encoding="utf-8")
            notes = [p.name for p in (workspace / EXPLORATIONS_DIRNAME).glob("*.md")]
        except (OSError, UnicodeDecodeError):
            return None
        return pick_topic(topics(curiosity), explored(notes))

    async def _turn(self, agent_id: str, text: str, model: str | None) -> TurnResult:
        """One beat's turn in the heartbeat session, its spend recorded (the daily caps);
        ``model``: the heartbeat's cheaper model (None: the agent's)."""
        turn = await self._ports.conversation.send(
            TurnRequest(
                address=SessionAddress(self._ports.owner, agent_id, CHANNEL),
                content=text,
                session_id=heartbeat_session(agent_id),
                approval_mode="deny",
                drafts=False,
                scheduled=True,
                model=model,
            )
        )
        result = await turn.result()
        day = local_day(self._ports.clock(), self._zone(agent_id))
        usage = result.usage
        await self._store.add_spend(agent_id, day, usage.total_tokens, usage.cost_usd or 0.0)
        if result.status != "completed":
            raise RuntimeError(f"turn {result.status}: {result.message}")
        return result

    async def _beat(
        self, agent_id: str, settings: HeartbeatSettings, record: BeatRecord, text: str
    ) -> None:
        session_id = heartbeat_session(agent_id)
        try:
            result = await self._turn(agent_id, text, settings.model)
            if is_quiet(result.text):
                await self._ports.sessions.forget(session_id)
                record.last_result = "quiet"
            else:
                await deliver(self._ports, settings.deliver_to, result.text, self._ports.owner)
                record.last_result = "delivered"
            record.failures = 0
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._failed(agent_id, record, exc)

    async def _explore(
        self,
        agent_id: str,
        settings: HeartbeatSettings,
        record: BeatRecord,
        topic: str,
        local: str,
        when: datetime,
    ) -> None:
        """An exploration beat: the turn under the fetch cap, its answer saved as the
        note; the heartbeat session is then let go (the note keeps what was found)."""
        session_id = heartbeat_session(agent_id)
        text = exploration_prompt(topic, settings.explore_max_fetches, local)
        self.fetches.open(session_id, settings.explore_max_fetches)
        try:
            result = await self._turn(agent_id, text, settings.model)
            workspace = self._ports.heartbeat_file(agent_id).parent
            path = note_path(workspace, topic, when.date().isoformat())
            await asyncio.to_thread(write_atomic, path, note(topic, local, result.text))
            await self._ports.sessions.forget(session_id)
            record.last_result = f"explored: {path.name}"
            record.failures = 0
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._failed(agent_id, record, exc)
        finally:
            self.fetches.close(session_id)

    @staticmethod
    def _failed(agent_id: str, record: BeatRecord, exc: Exception) -> None:
        record.failures += 1
        record.last_result = f"failed: {type(exc).__name__}: {exc}"
        logger.warning("heartbeat of {} failed ({}): {}", agent_id, record.failures, exc)
