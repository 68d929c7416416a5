"""Jobs linked to ``TASKS.md`` tasks: a task is scheduled at most once (issue 26).

The ``scheduler`` tool's ``create`` with a ``task`` goes through :func:`schedule_task`:
the task must be one open task of the agent's ``TASKS.md``
(:func:`~beamclaw_core.workspace.find_task`); when its ``[scheduled:<id>]`` marker names
a job that still exists the request is refused (:class:`TaskAlreadyScheduledError`),
else the job is created and the marker written (atomically) onto the task's line.

Invariants: links of one file are made one at a time (a lock per path), so two calls
for the same task cannot both pass the check; the job is stored before its marker, so a
crash between the two leaves a job whose task can be scheduled once more, never a
marker naming no job that blocks the task for good.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from beamclaw_core.workspace import find_task, link_schedule, open_tasks, read_tasks, write_tasks
from beamclaw_scheduler.errors import TaskAlreadyScheduledError, UnknownJobError, UnknownTaskError
from beamclaw_scheduler.requests import JobRequest
from beamclaw_scheduler.service import Scheduler
from beamclaw_scheduler.store import Job
from beamclaw_scheduler.tasks_file import tasks_file

_locks: dict[Path, asyncio.Lock] = {}


async def _live(scheduler: Scheduler, job_id: str) -> bool:
    try:
        job = await scheduler.get(job_id)
    except UnknownJobError:
        return False
    return job.status in ("active", "paused")


async def schedule_task(scheduler: Scheduler, request: JobRequest, task_name: str) -> Job:
    """Create ``request``'s job for the open task ``task_name`` and link them (see the
    module); :class:`UnknownTaskError` / :class:`TaskAlreadyScheduledError` when refused."""
    agent_id = request.agent_id or scheduler.ports.default_agent
    path = tasks_file(scheduler.ports, agent_id)
    async with _locks.setdefault(path, asyncio.Lock()):
        text = read_tasks(path)
        tasks = open_tasks(text)
        task = find_task(tasks, task_name)
        if task is None:
            raise UnknownTaskError(task_name, [t.text for t in tasks])
        if task.schedule_id is not None and await _live(scheduler, task.schedule_id):
            raise TaskAlreadyScheduledError(task.text, task.schedule_id)
        job = await scheduler.create(request)
        fresh = read_tasks(path)  # the file as it is now (the agent may have edited it)
        again = find_task(open_tasks(fresh), task.text)
        if again is not None:
            await asyncio.to_thread(write_tasks, path, link_schedule(fresh, again, job.id))
        return job
