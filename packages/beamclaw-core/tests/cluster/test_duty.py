"""A duty held under a lease: it runs only while the lease is held, and stops on its loss."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_core.cluster import Command, LinkInbox, hold_duty
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


async def test_the_duty_waits_for_the_lease_and_runs_once_it_is_free() -> None:
    link = OneLease(holder="other")
    started = asyncio.Event()
    standby: list[str] = []

    async def work() -> None:
        started.set()
        await asyncio.Event().wait()

    duty = asyncio.ensure_future(
        hold_duty(link, "poller", work, on_standby=lambda: standby.append("standby"))
    )
    await asyncio.sleep(0.05)
    assert not started.is_set() and standby  # another node holds it
    link.holder = None  # its holder died: the lease expired
    await asyncio.wait_for(started.wait(), 1)
    duty.cancel()
    with pytest.raises(asyncio.CancelledError):
        await duty
    assert link.released == [1] and link.holder is None  # given up on the way out


async def test_a_lost_lease_stops_the_duty_until_it_is_won_again() -> None:
    link = OneLease()
    runs: list[str] = []
    cancelled = asyncio.Event()

    async def work() -> None:
        runs.append("run")
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    duty = asyncio.ensure_future(hold_duty(link, "poller", work))
    await asyncio.sleep(0.01)
    assert runs == ["run"]
    link.taken_away = True  # this node paused past its lease; another took it
    await asyncio.wait_for(cancelled.wait(), 1)
    link.taken_away = False
    await asyncio.sleep(0.1)
    assert runs == ["run", "run"]  # won back (the lease was given up) and run again
    duty.cancel()
    with pytest.raises(asyncio.CancelledError):
        await duty


async def test_a_duty_that_fails_gives_the_lease_up_and_raises() -> None:
    link = OneLease()

    async def work() -> None:
        raise RuntimeError("token rejected")

    with pytest.raises(RuntimeError, match="token rejected"):
        await hold_duty(link, "poller", work)
    assert link.holder is None
