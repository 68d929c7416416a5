"""The ``[scheduler]`` configuration section."""

from __future__ import annotations

from beamclaw_obs import Section


class SchedulerSettings(Section):
    """``[scheduler]``: scheduled jobs and the heartbeat."""

    enabled: bool = True
