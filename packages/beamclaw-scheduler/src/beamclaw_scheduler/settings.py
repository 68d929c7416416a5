"""The ``[scheduler]`` configuration section."""

from __future__ import annotations

from beamclaw_obs import Section


class SchedulerSettings(Section):
    """``[scheduler]``: scheduled jobs and the heartbeat (not available yet)."""

    enabled: bool = False
    """Not available yet: nothing runs scheduled jobs, so only ``false`` loads (the
    gateway refuses ``true`` until a later release adds the scheduler)."""
