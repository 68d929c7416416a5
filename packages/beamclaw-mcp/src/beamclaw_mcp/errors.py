"""The beamclaw-mcp error tree."""

from __future__ import annotations


class BeamclawMCPError(Exception):
    """Base of every error raised by beamclaw-mcp."""
