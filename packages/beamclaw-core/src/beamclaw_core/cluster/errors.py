"""Errors of cluster mode (one tree under :class:`~beamclaw_core.errors.BeamclawCoreError`)."""

from __future__ import annotations

from beamclaw_core.errors import BeamclawCoreError


class ClusterError(BeamclawCoreError):
    """Base of cluster-mode errors."""


class CommandDecodeError(ClusterError):
    """A message on the command channel is not a :class:`~beamclaw_core.cluster.Command`."""


class NotOwnerError(ClusterError):
    """Another node owns the session and this operation cannot be forwarded to it."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id!r} is running on another node")
