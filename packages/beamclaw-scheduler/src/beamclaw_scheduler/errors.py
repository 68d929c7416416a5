"""The beamclaw-scheduler error tree."""

from __future__ import annotations


class BeamclawSchedulerError(Exception):
    """Base of every error raised by beamclaw-scheduler."""
