"""A duty held under a lease: it runs only while the lease is held, and stops on its loss."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_core.cluster import hold_duty

from .one_lease import OneLease


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
