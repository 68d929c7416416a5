"""Errors of cluster mode (one tree under :class:`~beamclaw_core.errors.BeamclawCoreError`)."""

from __future__ import annotations

from beamclaw_core.errors import BeamclawCoreError


class ClusterError(BeamclawCoreError):
    """Base of cluster-mode errors."""


class CommandDecodeError(ClusterError):
    """A message on the command channel is not a :class:`~beamclaw_core.cluster.Command`."""
