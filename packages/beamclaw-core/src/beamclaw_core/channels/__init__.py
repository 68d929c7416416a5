"""The channel layer: the protocol channels implement and the registry that runs them.

Lives in core, below the scheduler and the gateway, so anything that runs turns (a
scheduled job, a heartbeat) can deliver to ``telegram:<chat>`` or ``ws:<session>``
without importing the gateway, which registers the adapters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.channels.adapter import ChannelAdapter
    from beamclaw_core.channels.errors import (
        ChannelError,
        DuplicateChannelError,
        UnknownChannelError,
        UnknownTargetError,
    )
    from beamclaw_core.channels.registry import (
        ChannelRegistry,
        ChannelRun,
        ChannelSupervision,
        RunState,
    )
    from beamclaw_core.channels.types import ChannelCaps, Inbound, InboundSink, Outbound, Receipt
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.channels.adapter": ("ChannelAdapter",),
            "beamclaw_core.channels.errors": (
                "ChannelError",
                "DuplicateChannelError",
                "UnknownChannelError",
                "UnknownTargetError",
            ),
            "beamclaw_core.channels.registry": (
                "ChannelRegistry",
                "ChannelRun",
                "ChannelSupervision",
                "RunState",
            ),
            "beamclaw_core.channels.types": (
                "ChannelCaps",
                "Inbound",
                "InboundSink",
                "Outbound",
                "Receipt",
            ),
        },
    )

__all__ = [
    "ChannelAdapter",
    "ChannelCaps",
    "ChannelError",
    "ChannelRegistry",
    "ChannelRun",
    "ChannelSupervision",
    "DuplicateChannelError",
    "Inbound",
    "InboundSink",
    "Outbound",
    "Receipt",
    "RunState",
    "UnknownChannelError",
    "UnknownTargetError",
]
