"""The protocol a channel implements (DESIGN.md §6): one per platform, run by the
:class:`~beamclaw_core.channels.registry.ChannelRegistry`."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from beamclaw_core.channels.types import ChannelCaps, InboundSink, Outbound, Receipt
from beamclaw_core.loop.turn_events import ApprovalRequested
from beamclaw_obs import ComponentHealth


@runtime_checkable
class ChannelAdapter(Protocol):
    """A channel living inside the gateway (Telegram, the ``/ws`` hub, …).

    ``run`` is the adapter's life: it receives from its platform and hands each message to
    ``inbound`` until it is cancelled (shutdown), and only then returns; an exception, or
    returning early, is a crash the registry restarts it from. ``deliver`` and
    ``ask_approval`` may be called from any task at any time ``run`` is not cancelled.
    """

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> ChannelCaps: ...

    async def run(self, inbound: InboundSink) -> None: ...

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        """Send ``out`` to ``target``.

        Raises:
            UnknownTargetError: ``target`` is not reachable on this channel now.
        """
        ...

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        """Show ``request`` to ``target`` with the channel's own way to answer it."""
        ...

    def health(self) -> ComponentHealth:
        """The adapter's own view (connections, last poll); the registry adds its run's."""
        ...
