"""The beamclaw-core error tree. Subpackages add subclasses of :class:`BeamclawCoreError`."""

from __future__ import annotations


class BeamclawCoreError(Exception):
    """Base of every error raised by beamclaw-core."""
