"""Cluster mode: several gateway nodes share sessions (docs/scale-out.md).

One node at a time runs a session, by a lease whose epoch fences the store's writes; a
message at another node is queued durably and the owner woken; turn events, approval
answers and ``/stop`` cross nodes. The core talks to a :class:`ClusterLink` (the gateway
adapts Redis to it); :class:`LocalLink` is the single node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.cluster.commands import Command, CommandKind, command_from_dict
    from beamclaw_core.cluster.duty import hold_duty
    from beamclaw_core.cluster.errors import ClusterError, CommandDecodeError
    from beamclaw_core.cluster.lease import Claim, claim_after, renew_interval, sweep_interval
    from beamclaw_core.cluster.local import LocalLink
    from beamclaw_core.cluster.ports import ClusterLink, LinkInbox
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.cluster.commands": ("Command", "CommandKind", "command_from_dict"),
            "beamclaw_core.cluster.duty": ("hold_duty",),
            "beamclaw_core.cluster.errors": (
                "ClusterError",
                "CommandDecodeError",
            ),
            "beamclaw_core.cluster.lease": (
                "Claim",
                "claim_after",
                "renew_interval",
                "sweep_interval",
            ),
            "beamclaw_core.cluster.local": ("LocalLink",),
            "beamclaw_core.cluster.ports": ("ClusterLink", "LinkInbox"),
        },
    )

__all__ = [
    "Claim",
    "ClusterError",
    "ClusterLink",
    "Command",
    "CommandDecodeError",
    "CommandKind",
    "LinkInbox",
    "LocalLink",
    "claim_after",
    "command_from_dict",
    "hold_duty",
    "renew_interval",
    "sweep_interval",
]
