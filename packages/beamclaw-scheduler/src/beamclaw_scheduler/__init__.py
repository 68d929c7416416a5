"""beamclaw-scheduler: durable jobs (at / every / cron / random), heartbeats that cost
nothing when idle, and delivery of their answers to any channel. See docs/scheduler.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports
from beamclaw_scheduler.errors import (
    BeamclawSchedulerError,
    InvalidScheduleError,
    JobLimitError,
    TaskAlreadyScheduledError,
    UnknownJobError,
    UnknownTaskError,
)
from beamclaw_scheduler.settings import SchedulerSettings

if TYPE_CHECKING:
    from beamclaw_scheduler.fetch_cap import FETCH_TOOLS, CappedTool, FetchQuota
    from beamclaw_scheduler.ports import SchedulerPorts, Sessions
    from beamclaw_scheduler.requests import JobRequest
    from beamclaw_scheduler.service import Scheduler
    from beamclaw_scheduler.specs import describe
    from beamclaw_scheduler.store import Job, JobStore
    from beamclaw_scheduler.task_links import schedule_task
    from beamclaw_scheduler.tasks_file import read_open_tasks, tasks_file
    from beamclaw_scheduler.tool import SchedulerTool
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_scheduler.fetch_cap": ("FETCH_TOOLS", "CappedTool", "FetchQuota"),
            "beamclaw_scheduler.ports": ("SchedulerPorts", "Sessions"),
            "beamclaw_scheduler.requests": ("JobRequest",),
            "beamclaw_scheduler.service": ("Scheduler",),
            "beamclaw_scheduler.specs": ("describe",),
            "beamclaw_scheduler.store": ("Job", "JobStore"),
            "beamclaw_scheduler.task_links": ("schedule_task",),
            "beamclaw_scheduler.tasks_file": ("read_open_tasks", "tasks_file"),
            "beamclaw_scheduler.tool": ("SchedulerTool",),
        },
    )

__version__ = "0.1.0"

__all__ = [
    "FETCH_TOOLS",
    "BeamclawSchedulerError",
    "CappedTool",
    "FetchQuota",
    "InvalidScheduleError",
    "Job",
    "JobLimitError",
    "JobRequest",
    "JobStore",
    "Scheduler",
    "SchedulerPorts",
    "SchedulerSettings",
    "SchedulerTool",
    "Sessions",
    "TaskAlreadyScheduledError",
    "UnknownJobError",
    "UnknownTaskError",
    "__version__",
    "describe",
    "read_open_tasks",
    "schedule_task",
    "tasks_file",
]
