"""The ``scheduler`` tool: create/list/pause/resume/cancel of the calling agent's own jobs,
refusals the model can act on, the per-agent limit."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_scheduler import SchedulerSettings, SchedulerTool
from beamclaw_tools import SessionRef

ME = SessionRef(session_id="s1", agent_id="default", user_id="local:ann")


async def test_the_agent_manages_its_own_jobs(world_factory: Callable[..., Any]) -> None:
    world = await world_factory(ScriptedProvider([Reply("x")]))
    settings = SchedulerSettings(enabled=True, min_interval_seconds=60, max_jobs_per_agent=2)
    scheduler = world.scheduler(settings)
    tool = SchedulerTool(scheduler)
    made = await tool.execute(
        {"action": "create", "prompt": "stand up", "every_seconds": 3600, "deliver_to": "rec:me"},
        ME,
    )
    assert not made.is_error, made.content
    job_id = json.loads(made.content)["created"]["id"]
    stored = await scheduler.get(job_id)
    assert stored.user_id == "local:ann" and stored.agent_id == "default"
    too_often = await tool.execute({"action": "create", "prompt": "p", "every_seconds": 5}, ME)
    assert too_often.is_error and "at least 60" in too_often.content
    two_kinds = await tool.execute(
        {"action": "create", "prompt": "p", "every_seconds": 60, "cron": "* * * * *"}, ME
    )
    assert two_kinds.is_error and "exactly one of" in two_kinds.content
    await tool.execute({"action": "create", "prompt": "p2", "cron": "0 9 * * *"}, ME)
    over = await tool.execute({"action": "create", "prompt": "p3", "cron": "0 9 * * *"}, ME)
    assert over.is_error and "limit" in over.content
    listed = json.loads((await tool.execute({"action": "list"}, ME)).content)["jobs"]
    assert sorted(j["prompt"] for j in listed) == ["p2", "stand up"]
    paused = await tool.execute({"action": "pause", "job_id": job_id}, ME)
    assert json.loads(paused.content)["paused"]["status"] == "paused"
    resumed = await tool.execute({"action": "resume", "job_id": job_id}, ME)
    assert json.loads(resumed.content)["resumed"]["status"] == "active"
    other = SessionRef(session_id="s2", agent_id="other", user_id="local:ann")
    foreign = await tool.execute({"action": "cancel", "job_id": job_id}, other)
    assert foreign.is_error and "no scheduled job" in foreign.content
    missing_id = await tool.execute({"action": "cancel"}, ME)
    assert missing_id.is_error and "job_id" in missing_id.content
    assert not (await tool.execute({"action": "cancel", "job_id": job_id}, ME)).is_error
    assert len(await scheduler.list()) == 1
