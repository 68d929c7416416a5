"""The heap trimmer: glibc's ``malloc_trim`` really gives freed, fragmented heap back to
the OS (RSS measured), the trimmer calls it periodically off the event loop while started,
and does nothing when disabled."""

from __future__ import annotations

import asyncio
import ctypes
import threading
from pathlib import Path

import pytest

from beamclaw_gateway.heap_trim import HeapTrimmer, malloc_trim

MiB = 1 << 20


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(malloc_trim() is None, reason="the C library has no malloc_trim")
def test_malloc_trim_gives_fragmented_free_heap_back() -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(2048) for _ in range(40_000)]  # ~80 MiB below mmap's threshold
    for block in blocks:
        ctypes.memset(block, 1, 2048)  # touched: resident
    kept = blocks[::64]  # a live block every 128 KiB pins the heap: free() cannot shrink it
    for i, block in enumerate(blocks):
        if i % 64:
            libc.free(block)
    before = _rss()
    trim = malloc_trim()
    assert trim is not None
    trim()
    after = _rss()
    for block in kept:
        libc.free(block)
    assert before - after > 40 * MiB, f"RSS {before / MiB:.0f} -> {after / MiB:.0f} MiB"


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
