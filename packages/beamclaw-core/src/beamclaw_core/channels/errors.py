"""Errors of the channel layer."""

from __future__ import annotations

from beamclaw_core.errors import BeamclawCoreError


class ChannelError(BeamclawCoreError):
    """Base of channel errors."""


class UnknownChannelError(ChannelError):
    """No channel of this name is registered."""

    def __init__(self, channel: str) -> None:
        self.channel = channel
        super().__init__(f"unknown channel {channel!r}")


class UnknownTargetError(ChannelError):
    """A channel has no recipient with this target id (now)."""

    def __init__(self, channel: str, target: str) -> None:
        self.channel = channel
        self.target = target
        super().__init__(f"channel {channel!r} has no target {target!r}")


class DuplicateChannelError(ChannelError):
    """A channel of this name is registered already."""

    def __init__(self, channel: str) -> None:
        self.channel = channel
        super().__init__(f"a channel named {channel!r} is registered already")
