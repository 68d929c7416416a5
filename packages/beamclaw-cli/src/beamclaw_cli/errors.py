"""The beamclaw-cli error tree."""

from __future__ import annotations


class BeamclawCliError(Exception):
    """Base of every error raised by beamclaw-cli."""


class UsageError(BeamclawCliError):
    """The command line was well-formed but asks for something impossible (exit 2)."""


class GatewayUnreachableError(BeamclawCliError):
    """No gateway answered at the address (refused, timed out, or not HTTP)."""
