"""The heap trimmer calls ``malloc_trim`` periodically off the event loop while started,
and does nothing when disabled (that a trim gives fragmented free heap back to the OS is
``packages/beamclaw-obs/tests/test_heap.py``'s)."""

from __future__ import annotations

import asyncio
import threading

from beamclaw_gateway.heap_trim import HeapTrimmer


async def test_the_trimmer_trims_periodically_off_the_loop_until_stopped() -> None:
    threads: list[str] = []

    def trim() -> int:
        threads.append(threading.current_thread().name)
        return 1

    trimmer = HeapTrimmer(0.02, trim)
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
