"""``TASKS.md`` and the scheduler (issue 26): a task linked to a live job is never
scheduled twice, and the heartbeat reviews the open tasks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from beamclaw_core import HeartbeatSettings
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_scheduler import SchedulerSettings, SchedulerTool, tasks_file
from beamclaw_tools import SessionRef

from .conftest import T0

ME = SessionRef(session_id="s1", agent_id="default", user_id="local:ann")
TASKS = "# TASKS.md\n## Tasks\n- [ ] Water the plants\n- [x] Book the dentist\n"


async def test_tasks_md_markers_prevent_double_scheduling(
    world_factory: Callable[..., Any],
) -> None:
    world = await world_factory(ScriptedProvider([Reply("x")]))
    scheduler = world.scheduler(SchedulerSettings(enabled=True, min_interval_seconds=60))
    path = tasks_file(world.ports, "default")
    path.write_text(TASKS, encoding="utf-8")
    tool = SchedulerTool(scheduler)
    create = {"action": "create", "prompt": "water them", "cron": "0 9 * * 5"}
    made = await tool.execute({**create, "task": "water the plants"}, ME)
    assert not made.is_error, made.content
    job_id = json.loads(made.content)["created"]["id"]
    assert f"- [ ] Water the plants [scheduled:{job_id}]\n" in path.read_text(encoding="utf-8")
    again = await tool.execute({**create, "task": "Water the plants"}, ME)
    assert again.is_error and f"already scheduled as job {job_id}" in again.content
    assert len(await scheduler.list()) == 1, "refused before any job was created"
    done = await tool.execute({**create, "task": "Book the dentist"}, ME)
    assert done.is_error and "open tasks: Water the plants" in done.content
    # the job is gone: the marker no longer blocks the task, and is replaced
    assert not (await tool.execute({"action": "cancel", "job_id": job_id}, ME)).is_error
    anew = await tool.execute({**create, "task": "water the plants"}, ME)
    assert not anew.is_error, anew.content
    new_id = json.loads(anew.content)["created"]["id"]
    text = path.read_text(encoding="utf-8")
    assert f"[scheduled:{new_id}]" in text and job_id not in text
    assert text.endswith("- [x] Book the dentist\n"), "the rest of the file is kept"


async def test_the_heartbeat_reviews_open_tasks(world_factory: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("HEARTBEAT_OK")], repeat_last=True)
    world = await world_factory(provider)
    world.heartbeat_md.write_text("# nothing here\n")
    path = tasks_file(world.ports, "default")
    path.write_text(TASKS.replace("plants\n", "plants [scheduled:j1]\n"), encoding="utf-8")
    scheduler = world.scheduler(
        SchedulerSettings(
            enabled=True, heartbeat=HeartbeatSettings(every_seconds=60, deliver_to="rec:me")
        )
    )
    for at in (T0, T0 + 61):
        world.clock.now = at
        await scheduler.tick()
        await scheduler.settle()
    assert len(provider.calls) == 1, "an open task is enough for a beat"
    beat = provider.calls[0].messages[-1].text
    assert "Your open tasks (TASKS.md)" in beat
    assert "- [ ] Water the plants [scheduled:j1]" in beat and "dentist" not in beat
    path.write_text(TASKS.replace("- [ ] Water", "- [x] Water"), encoding="utf-8")
    world.clock.now = T0 + 122
    await scheduler.tick()
    await scheduler.settle()
    assert len(provider.calls) == 1, "no open task, no HEARTBEAT.md line: no LLM call"
