"""The beamclaw-sandbox error tree."""

from __future__ import annotations


class BeamclawSandboxError(Exception):
    """Base of every error raised by beamclaw-sandbox."""
