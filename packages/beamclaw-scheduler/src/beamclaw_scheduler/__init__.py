"""beamclaw-scheduler."""

from beamclaw_scheduler.errors import BeamclawSchedulerError
from beamclaw_scheduler.settings import SchedulerSettings

__version__ = "0.1.0"

__all__ = ["BeamclawSchedulerError", "SchedulerSettings", "__version__"]
