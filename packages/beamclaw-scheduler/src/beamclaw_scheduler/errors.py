"""The beamclaw-scheduler error tree."""

from __future__ import annotations


class BeamclawSchedulerError(Exception):
    """Base of every error raised by beamclaw-scheduler."""


class InvalidScheduleError(BeamclawSchedulerError):
    """A job's definition is refused; ``field`` names the part at fault, the message says
    what would be accepted (the API answers 422, the tool hands it to the model)."""

    def __init__(self, field: str | None, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(message)


class UnknownJobError(BeamclawSchedulerError):
    """No job has this id."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"no scheduled job {job_id!r}")


class JobLimitError(InvalidScheduleError):
    """The agent has ``max_jobs_per_agent`` jobs already."""

    def __init__(self, agent_id: str, limit: int) -> None:
        self.agent_id = agent_id
        self.limit = limit
        super().__init__(
            None,
            f"agent {agent_id!r} has {limit} scheduled jobs already (the limit); cancel one first",
        )


class TaskAlreadyScheduledError(InvalidScheduleError):
    """The ``TASKS.md`` task is linked to a job that still exists: never scheduled twice."""

    def __init__(self, task: str, job_id: str) -> None:
        self.task = task
        self.job_id = job_id
        super().__init__(
            "task",
            f"task {task!r} is already scheduled as job {job_id} (see action 'list'); "
            "cancel that job first to schedule it anew",
        )


class UnknownTaskError(InvalidScheduleError):
    """No single open ``TASKS.md`` task matches the name given."""

    def __init__(self, task: str, open_tasks: list[str]) -> None:
        self.task = task
        listed = "; ".join(open_tasks) or "none"
        super().__init__(
            "task",
            f"no single open task in TASKS.md matches {task!r} (open tasks: {listed}); "
            "add it as a '- [ ] ...' line first, or name it exactly",
        )
