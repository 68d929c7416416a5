"""Shared measurement helpers for benchmarks: medians, percentiles, peak memory."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (pct in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def rounds(fn: Callable[[], float], n: int = 5) -> list[float]:
    return [fn() for _ in range(n)]


@contextmanager
def timer() -> Iterator[Callable[[], float]]:
    start = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


@contextmanager
def traced_peak() -> Iterator[Callable[[], int]]:
    """Peak Python-allocated bytes inside the block (tracemalloc)."""
    tracemalloc.start()
    peak: list[int] = []
    try:
        yield lambda: peak[0] if peak else tracemalloc.get_traced_memory()[1]
    finally:
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def max_rss_mb() -> float:
    """The process's peak resident set size so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """The process's resident set size now, in MiB (Linux ``/proc``; else the peak)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
    except OSError:
        return max_rss_mb()
    return pages * resource.getpagesize() / 1024 / 1024


class FakeUpstreamProcess:
    """A fake LLM server in a child process (``script``: Python source that prints its
    base URL on the first line, then answers ``last`` on stdin with the last request body),
    so its work is not charged to the measured process. The gateway side runs with a
    temporary ``BEAMCLAW_HOME`` (restored afterwards)."""

    def __init__(self, server: subprocess.Popen[str], base_url: str) -> None:
        self.server = server
        self.base_url = base_url

    def last_request(self) -> bytes:
        """The body of the last request the fake server received."""
        assert self.server.stdin is not None and self.server.stdout is not None
        self.server.stdin.write("last\n")
        self.server.stdin.flush()
        return self.server.stdout.readline().rstrip("\n").encode()


@contextmanager
def fake_upstream_process(
    script: str, env: dict[str, str] | None = None
) -> Iterator[FakeUpstreamProcess]:
    server = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    saved = os.environ.get("BEAMCLAW_HOME")
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as home:
            os.environ["BEAMCLAW_HOME"] = home
            yield FakeUpstreamProcess(server, base_url)
    finally:
        if saved is None:
            os.environ.pop("BEAMCLAW_HOME", None)
        else:
            os.environ["BEAMCLAW_HOME"] = saved
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
