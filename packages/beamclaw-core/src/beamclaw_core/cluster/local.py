"""The single node's link: every lease granted under epoch 0, commands looped back."""

from __future__ import annotations

import asyncio

from beamclaw_core.cluster.commands import Command
from beamclaw_core.cluster.ports import LinkInbox
from beamclaw_core.loop.turn_events import TurnEvent

LOCAL_LEASE_SECONDS = 3600.0
"""Nothing expires on one node; the number only paces the (idle) renewal task."""


class LocalLink:
    """:class:`~beamclaw_core.cluster.ClusterLink` of a node alone: it owns everything."""

    def __init__(self) -> None:
        self._commands: asyncio.Queue[Command] = asyncio.Queue()

    @property
    def shared(self) -> bool:
        return False

    @property
    def lease_seconds(self) -> float:
        return LOCAL_LEASE_SECONDS

    @property
    def node_id(self) -> str:
        return "local"

    async def acquire(self, session_id: str) -> int | None:
        return 0

    async def renew(self, session_id: str, epoch: int) -> bool:
        return True

    async def release(self, session_id: str, epoch: int) -> None:
        return None

    async def tell(self, command: Command) -> None:
        self._commands.put_nowait(command)

    async def follow(self, session_id: str) -> None:
        return None

    def publish(self, event: TurnEvent) -> None:
        return None

    async def recent(self, session_id: str, count: int) -> list[TurnEvent]:
        return []

    async def serve(self, inbox: LinkInbox) -> None:
        while True:
            await inbox.on_command(await self._commands.get())

    async def close(self) -> None:
        return None
