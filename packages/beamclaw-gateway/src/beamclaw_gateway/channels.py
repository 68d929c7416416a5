"""Channels the gateway can deliver to (``POST /api/deliver``, the scheduler, heartbeats).

A channel names its recipients by *target* (a WebSocket session id, a Telegram chat id…).
Channels register with the :class:`ChannelRegistry` when they start; ``/health`` reports
each one.
"""

from __future__ import annotations

from typing import Protocol

from beamclaw_gateway.errors import UnknownChannelError
from beamclaw_obs import ComponentHealth, HealthState


class Channel(Protocol):
    """Something that delivers text to named targets."""

    @property
    def name(self) -> str: ...

    async def deliver(self, target: str, text: str) -> int:
        """Deliver ``text`` to ``target``; returns how many recipients got it.

        Raises:
            UnknownTargetError: ``target`` is not reachable on this channel now.
        """
        ...

    def health(self) -> ComponentHealth: ...


class ChannelRegistry:
    """The channels of a running gateway, by name."""

    def __init__(self) -> None:
        self._channels: dict[str, Channel] = {}

    def register(self, channel: Channel) -> None:
        self._channels[channel.name] = channel

    def unregister(self, name: str) -> None:
        self._channels.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._channels)

    def get(self, name: str) -> Channel:
        channel = self._channels.get(name)
        if channel is None:
            raise UnknownChannelError(name)
        return channel

    async def deliver(self, name: str, target: str, text: str) -> int:
        return await self.get(name).deliver(target, text)

    def health(self) -> ComponentHealth:
        """``up`` with each channel's status; ``degraded`` when one is down."""
        states = {name: ch.health() for name, ch in sorted(self._channels.items())}
        data: dict[str, object] = {name: h.as_dict() for name, h in states.items()}
        if any(h.state == HealthState.DOWN for h in states.values()):
            return ComponentHealth(HealthState.DEGRADED, "a channel is down", data)
        return ComponentHealth(HealthState.UP, data=data)
