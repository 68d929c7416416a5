"""Freed C-heap memory goes back to the system (glibc's ``malloc_trim``)."""

from __future__ import annotations

import os
import sys

import pytest

from beamclaw_obs.heap import malloc_trim


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_memory_freed_in_the_middle_of_the_heap_leaves_the_process() -> None:
    # 1 KiB strings come from malloc (over pymalloc's 512 bytes); keeping every 64th
    # pins the top of the heap, so glibc alone would keep the freed pages below it
    blocks = [os.urandom(1024) for _ in range(60_000)]
    kept = blocks[::64]
    del blocks
    before = _rss_mb()
    trim = malloc_trim()
    assert trim is not None, "glibc has malloc_trim"
    trim()
    after = _rss_mb()
    assert before - after > 20, (before, after)
    assert len(kept) == 938
