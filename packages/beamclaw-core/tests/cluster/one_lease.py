"""A cluster link with one lease in memory, for the core's cluster tests."""

from __future__ import annotations

from beamclaw_core.cluster import Command, LinkInbox
from beamclaw_core.loop.turn_events import TurnEvent


class OneLease:
    """A link with one lease in memory: ``holder`` is who has it (None: free); renewals
    fail once ``taken_away`` is set."""

    def __init__(self, holder: str | None = None) -> None:
        self.holder = holder
        self.epoch = 0
        self.taken_away = False
        self.released: list[int] = []

    @property
    def shared(self) -> bool:
        return True

    @property
    def lease_seconds(self) -> float:
        return 0.06

    @property
    def node_id(self) -> str:
        return "me"

    async def acquire(self, session_id: str) -> int | None:
        if self.holder is not None:
            return None
        self.holder, self.epoch = "me", self.epoch + 1
        return self.epoch

    async def renew(self, session_id: str, epoch: int) -> bool:
        return not self.taken_away and self.holder == "me" and epoch == self.epoch

    async def release(self, session_id: str, epoch: int) -> None:
        self.released.append(epoch)
        if self.holder == "me" and epoch == self.epoch:
            self.holder = None

    async def tell(self, command: Command) -> None: ...

    async def follow(self, session_id: str) -> None: ...

    def publish(self, event: TurnEvent) -> None: ...

    async def recent(self, session_id: str, count: int) -> list[TurnEvent]:
        return []

    async def serve(self, inbox: LinkInbox) -> None: ...

    async def close(self) -> None: ...
