"""The port between the core and the machinery that lets several nodes share sessions.

:class:`ClusterLink` is what a core needs from a cluster: a lease per session with a
fencing epoch, a command channel to the owner of a session, and a relay of turn events to
the other nodes. The gateway adapts Redis to it; :class:`~beamclaw_core.cluster.LocalLink`
is the single node, so every core runs one code path.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from beamclaw_core.cluster.commands import Command
from beamclaw_core.loop.turn_events import TurnEvent


class LinkInbox(Protocol):
    """What a link delivers to its core while it runs."""

    def watched(self) -> Collection[str]:
        """Sessions whose events from other nodes this node wants now."""
        ...

    def on_event(self, event: TurnEvent) -> None:
        """An event another node published for a watched session."""
        ...

    async def on_command(self, command: Command) -> None:
        """A command some node sent (this node may or may not own its session)."""
        ...


class ClusterLink(Protocol):
    """Leases, commands and events shared by the nodes of a cluster."""

    @property
    def shared(self) -> bool:
        """Other nodes may exist: sessions must be swept for dead owners."""
        ...

    @property
    def lease_seconds(self) -> float: ...

    @property
    def node_id(self) -> str:
        """This node's name, unique in the cluster."""
        ...

    async def acquire(self, session_id: str) -> int | None:
        """Take the session's lease: its new epoch, or None when another node holds it."""
        ...

    async def renew(self, session_id: str, epoch: int) -> bool:
        """Extend a lease held under ``epoch``; False when it was lost (expired, taken)."""
        ...

    async def release(self, session_id: str, epoch: int) -> None:
        """Give up a lease held under ``epoch`` (nothing when it is no longer ours)."""
        ...

    async def tell(self, command: Command) -> None:
        """Send ``command`` to every node (its session's owner acts on it)."""
        ...

    async def follow(self, session_id: str) -> None:
        """Relay the session's events to this node from now on (before a forwarded run
        can start); later the inbox's :meth:`~LinkInbox.watched` decides."""
        ...

    def publish(self, event: TurnEvent) -> None:
        """Relay an event of a session this node owns to the other nodes (in order,
        never blocking the loop); every event relayed before a lease is released is
        readable (:meth:`recent`) once it is."""
        ...

    async def recent(self, session_id: str, count: int) -> list[TurnEvent]:
        """The newest ``count`` (at most) events relayed for the session, oldest first."""
        ...

    async def serve(self, inbox: LinkInbox) -> None:
        """Deliver commands and watched events to ``inbox`` until cancelled."""
        ...

    async def close(self) -> None: ...
