"""The ``scheduler`` tool: the agent creates, lists, cancels, pauses and resumes its own
jobs. A refused job comes back as a tool error whose text says what would be accepted, so
the model can correct its call; an agent sees and changes only its own jobs, within
``max_jobs_per_agent``. Jobs an agent creates belong to the person it is talking to."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from beamclaw_scheduler.errors import BeamclawSchedulerError, UnknownJobError
from beamclaw_scheduler.requests import JobRequest
from beamclaw_scheduler.service import Scheduler
from beamclaw_scheduler.specs import describe
from beamclaw_scheduler.store import Job
from beamclaw_scheduler.task_links import schedule_task
from beamclaw_tools import SessionRef, ToolArgs, ToolOutput, TypedTool, make_definition

_DESCRIPTION = (
    "Schedule yourself to act later: create a job with a prompt you will receive at that "
    "time, and where your answer goes. Exactly one of every_seconds, at (ISO-8601 with "
    "offset), cron (5 fields, in timezone) or random_in ({'between': 'HH:MM-HH:MM'}, once a "
    "day). deliver_to: 'silent' (default), 'telegram:<chat>', 'webhook:<name>'; unset: the "
    "channel your person used last. task: the open TASKS.md task this job is for (it is "
    "marked [scheduled:<job id>] and never scheduled twice). Also list, cancel, pause and "
    "resume your jobs by job_id."
)


class SchedulerArgs(ToolArgs):
    action: Literal["create", "list", "cancel", "pause", "resume"] = Field(
        description="What to do."
    )
    prompt: str | None = Field(default=None, description="create: what you will be told.")
    every_seconds: int | None = Field(default=None, description="create: repeat interval.")
    at: str | None = Field(default=None, description="create: one time, ISO-8601 with offset.")
    cron: str | None = Field(default=None, description="create: 5-field cron expression.")
    random_in: dict[str, Any] | None = Field(
        default=None, description="create: {'between': 'HH:MM-HH:MM'} once a day."
    )
    timezone: str | None = Field(default=None, description="create: IANA zone for cron/random.")
    deliver_to: str | None = Field(default=None, description="create: where the answer goes.")
    task: str | None = Field(
        default=None, description="create: the open TASKS.md task this job is for."
    )
    job_id: str | None = Field(default=None, description="cancel/pause/resume: the job.")


def job_view(job: Job) -> dict[str, Any]:
    """A job as the tool (and the CLI) shows it."""
    return {
        "id": job.id,
        "kind": job.kind,
        **describe(job.spec),
        "prompt": job.prompt,
        "deliver_to": job.deliver_to,
        "status": job.status,
        "next_run_at": job.next_run_at,
        "fire_count": job.fire_count,
        "error_count": job.error_count,
        "last_error": job.last_error,
    }


class SchedulerTool(TypedTool[SchedulerArgs]):
    """The ``scheduler`` tool over a :class:`Scheduler` (see the module)."""

    def __init__(self, scheduler: Scheduler) -> None:
        super().__init__(
            SchedulerArgs,
            make_definition("scheduler", _DESCRIPTION, SchedulerArgs, timeout_seconds=15.0),
        )
        self._scheduler = scheduler

    async def run(self, args: SchedulerArgs, session: SessionRef) -> ToolOutput:
        try:
            return await self._act(args, session)
        except BeamclawSchedulerError as exc:
            return ToolOutput.error(str(exc))

    async def _act(self, args: SchedulerArgs, session: SessionRef) -> ToolOutput:
        scheduler = self._scheduler
        if args.action == "list":
            jobs = await scheduler.list(agent_id=session.agent_id)
            return _json({"jobs": [job_view(j) for j in jobs]})
        if args.action == "create":
            request = JobRequest(
                prompt=args.prompt or "",
                every_seconds=args.every_seconds,
                at=args.at,
                cron=args.cron,
                random_in=args.random_in,
                timezone=args.timezone,
                agent_id=session.agent_id,
                user_id=session.user_id,
                deliver_to=args.deliver_to,
            )
            job = await (
                scheduler.create(request)
                if args.task is None
                else schedule_task(scheduler, request, args.task)
            )
            return _json({"created": job_view(job)})
        if not args.job_id:
            return ToolOutput.error(f"{args.action} needs job_id (see action 'list')")
        job = await scheduler.get(args.job_id)
        if job.agent_id != session.agent_id:
            raise UnknownJobError(args.job_id)
        if args.action == "cancel":
            await scheduler.cancel(job.id)
            return _json({"cancelled": job.id})
        changed = await (scheduler.pause if args.action == "pause" else scheduler.resume)(job.id)
        return _json({args.action + "d": job_view(changed)})


def _json(value: dict[str, Any]) -> ToolOutput:
    return ToolOutput(content=json.dumps(value, indent=1), structured=value)
