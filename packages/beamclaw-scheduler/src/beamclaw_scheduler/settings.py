"""The ``[scheduler]`` configuration section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from beamclaw_core import HeartbeatSettings
from beamclaw_obs import Section

MissedFires = Literal["skip", "run_once"]


class SchedulerSettings(Section):
    """``[scheduler]``: durable scheduled jobs (``/api/schedules``, the ``scheduler`` tool,
    ``beamclaw scheduler``) and each agent's heartbeat. See docs/scheduler.md."""

    enabled: bool = False
    """Run due jobs and heartbeats, and serve ``/api/schedules``. Off, nothing fires and
    the API answers 503 ``scheduler_disabled``; stored jobs stay and resume when it is on."""
    min_interval_seconds: int = Field(default=60, ge=1)
    """The smallest ``every_seconds`` a job may have."""
    tick_seconds: float = Field(default=1.0, gt=0, le=60)
    """How often the runner looks for due jobs (the precision of a fire)."""
    missed_fires: MissedFires = "run_once"
    """A job whose time passed while the gateway was down: ``run_once`` fires it once on
    start (however many times it was missed), ``skip`` lets the missed times go and waits
    for the next (a one-shot ``at`` job then completes without firing)."""
    missed_grace_seconds: float = Field(default=120.0, ge=0)
    """A fire later than this after its time counts as missed (``missed_fires``)."""
    max_errors: int = Field(default=3, ge=1)
    """Consecutive failed fires after which a job pauses (its person is told); a job may
    set its own."""
    max_jobs_per_agent: int = Field(default=50, ge=1)
    """Active and paused jobs one agent may have (the API and the tool refuse more)."""
    approval_mode: Literal["deny", "wait"] = "deny"
    """A tool approval inside a job's turn: ``deny`` answers no at once (nobody is
    watching), ``wait`` leaves it for another front end until the approval timeout. A job
    may set its own (``approval_mode``)."""
    heartbeat: HeartbeatSettings = Field(default_factory=HeartbeatSettings)
    """Every agent's heartbeat (``[agents.<id>.heartbeat]`` overrides per agent)."""
