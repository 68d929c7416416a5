"""The ``[obs]`` configuration section."""

from __future__ import annotations

from typing import Literal

from beamclaw_obs.section import Section

LogLevel = Literal["TRACE", "DEBUG", "INFO", "SUCCESS", "WARNING", "ERROR", "CRITICAL"]


class ObsSettings(Section):
    """``[obs]``: logging and metrics."""

    log_level: LogLevel = "INFO"
    """Level of log lines written to stderr."""
    file_log_level: LogLevel = "DEBUG"
    """Level of JSON log lines written to ``$BEAMCLAW_HOME/logs/beamclaw.jsonl``."""
    log_rotation: str = "10 MB"
    """When the JSON log file rotates (loguru rotation: size or time)."""
    log_retention: int = 5
    """How many rotated log files to keep."""
    queue_size: int = 10_000
    """Capacity of each backend's event queue; a full queue drops (and counts) events."""
    metrics_enabled: bool = True
    """Expose Prometheus metrics at ``/metrics``."""
