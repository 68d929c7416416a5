"""The heap trimmer collects garbage cycles on the event loop, then calls ``malloc_trim``
off it, periodically while started, and does nothing when disabled (that a trim gives
fragmented free heap back to the OS is ``packages/beamclaw-obs/tests/test_heap.py``'s)."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import Callable

from beamclaw_gateway.heap_trim import HeapTrimmer


async def test_the_trimmer_trims_periodically_off_the_loop_until_stopped() -> None:
    threads: list[str] = []

    def trim() -> int:
        threads.append(threading.current_thread().name)
        return 1

    trimmer = HeapTrimmer(0.02, trim, lambda: 0)
    trimmer.start()
    await asyncio.sleep(0.2)
    await trimmer.stop()
    done = trimmer.trims
    await asyncio.sleep(0.1)
    assert done >= 3 and trimmer.trims == done == len(threads), "stopped means stopped"
    assert threading.main_thread().name not in threads, "never on the event loop's thread"


async def test_zero_seconds_never_trims() -> None:
    calls: list[int] = []
    trimmer = HeapTrimmer(0, lambda: calls.append(1) or 1)
    trimmer.start()
    await asyncio.sleep(0.05)
    assert not trimmer.active and calls == []
    await trimmer.stop()


class _Node:
    """A cycle's member, holding a buffer the way a dropped session holds its history."""

    def __init__(self) -> None:
        self.other: _Node | None = None
        self.buffer = bytearray(1 << 20)


async def test_each_round_frees_cycles_left_in_the_old_generation_on_the_loop() -> None:
    # an evicted lane's cycle waits for a full pass, which the gateway's thresholds make
    # minutes apart under load; here the automatic collector is off altogether
    threads: list[str] = []

    def collect() -> int:
        threads.append(threading.current_thread().name)
        return gc.collect()

    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        assert gone() is not None, "a cycle outlives its last outside reference"
        trimmer = HeapTrimmer(0.02, lambda: 1, collect)
        trimmer.start()
        await asyncio.sleep(0.1)
        await trimmer.stop()
    finally:
        if was_enabled:
            gc.enable()
    assert gone() is None, "a round collects the cycles the thresholds left alive"
    assert trimmer.collections >= 1 and trimmer.trims == trimmer.collections
    assert set(threads) == {threading.current_thread().name}, "collected on the loop's thread"


async def _until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


async def test_a_round_due_while_turns_run_waits_for_a_quiet_moment_at_most_a_period() -> None:
    """A full collection stalls every stream in flight: a round waits while turns run,
    but never more than one more period."""
    quiet = [False]
    collected: list[int] = []
    trimmer = HeapTrimmer(
        0.1,
        lambda: 1,
        lambda: collected.append(1) or 0,
        quiet=lambda: quiet[0],
        poll_seconds=0.01,
    )
    trimmer.start()
    try:
        await asyncio.sleep(0.15)  # due at 0.1 s, turns running
        assert collected == []
        quiet[0] = True
        await _until(lambda: len(collected) == 1)  # the first quiet poll
        assert trimmer.waited_seconds < 0.1
        quiet[0] = False
        await _until(lambda: len(collected) == 2)  # never quiet: it runs at the limit
        assert trimmer.waited_seconds >= 0.1
    finally:
        await trimmer.stop()
