"""The in-process moving-window storage under ``limits``' own strategy."""

from __future__ import annotations

from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter

from beamclaw_gateway.window_storage import SWEEP_SECONDS, WindowStorage


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def test_a_moving_window_frees_slots_as_old_hits_age_out() -> None:
    clock = Clock()
    storage = WindowStorage(clock=clock)
    limiter = MovingWindowRateLimiter(storage)
    item = parse("3/10 seconds")
    for step in range(3):
        clock.now += 1
        assert await limiter.hit(item, "ip", "a"), step
    assert not await limiter.hit(item, "ip", "a")  # 3 in the last 10 s
    assert await limiter.hit(item, "ip", "b")  # keys are independent
    stats = await limiter.get_window_stats(item, "ip", "a")
    assert stats.remaining == 0
    assert stats.reset_time == 1_001.0 + 10  # the oldest hit leaves the window then
    clock.now = 1_011.0  # the first hit (at 1001) is out
    assert await limiter.hit(item, "ip", "a")
    assert not await limiter.hit(item, "ip", "a")
    assert (await limiter.get_window_stats(item, "ip", "a")).remaining == 0


async def test_costs_bigger_than_the_limit_and_partial_costs() -> None:
    storage = WindowStorage(clock=Clock())
    assert not await storage.acquire_entry("k", limit=2, expiry=10, amount=3)
    assert await storage.acquire_entry("k", limit=2, expiry=10, amount=2)
    assert not await storage.acquire_entry("k", limit=2, expiry=10)
    assert (await storage.get_moving_window("k", 2, 10))[1] == 2


async def test_idle_keys_are_swept_and_reset_clears_everything() -> None:
    clock = Clock()
    storage = WindowStorage(clock=clock)
    await storage.acquire_entry("old", limit=5, expiry=10)
    clock.now += SWEEP_SECONDS + 1
    await storage.acquire_entry("new", limit=5, expiry=10)  # triggers the sweep
    assert storage.tracked == 1  # "old" is gone from memory, "new"'s hit is kept
    assert (await storage.get_moving_window("new", 5, 10))[1] == 1
    assert await storage.incr("c", expiry=5) == 1
    assert await storage.incr("c", expiry=5, amount=2) == 3
    assert await storage.get("c") == 3
    clock.now += 6
    assert await storage.get("c") == 0  # the counter expired
    assert await storage.reset() is not None
    assert await storage.get_moving_window("new", 5, 10) == (clock.now, 0)
    await storage.clear("new")
    assert await storage.check()
