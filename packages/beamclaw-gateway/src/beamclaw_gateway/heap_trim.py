"""Freeing a gateway's garbage cycles and giving the heap memory back to the system.

Two things kept a soak's RSS rising (docs/faults.md, *Soak*):

* **Cycles aged into the old generation.** An evicted session lane leaves a cycle
  (its cancelled tasks' ``CancelledError`` tracebacks hold their frames, which hold the
  lane). With the gateway's young-generation threshold (``[gateway] gc_threshold``,
  10,000) a lane idle for seconds outlives two passes and reaches the old generation,
  whose full pass CPython runs only every ten middle ones -- minutes apart under load.
  Meanwhile every dropped session's messages, events and encodings wait there, and the
  heap grows around them. A full ``gc.collect()`` every period bounds that wait.
* **Freed pages kept by glibc.** ``malloc`` keeps what a process frees for its next
  allocations; freed pages between live blocks stay in RSS, out of the reach of the
  heap's automatic trim (only at its top). ``malloc_trim(0)`` gives them back.

:class:`HeapTrimmer` does both, in that order, every ``[gateway] heap_trim_seconds``.
A full collection stops the process for its length (≈ 100 ms with a few hundred sessions
loaded), and every stream then in flight stalls as long: a round that falls due while
turns run waits for a quiet moment (checked every ``poll_seconds``), at most one more
period. Invariants: the collection runs on the event loop's thread (finalizers and weak
reference callbacks run where the objects they touch live); the trim runs on a worker
thread, never on the event loop (it takes the allocator's locks for a few
milliseconds), one at a time; on a C library without ``malloc_trim`` (musl, macOS) only
the collection runs; a failed round is logged and the next one tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable

from loguru import logger

from beamclaw_obs.heap import malloc_trim

__all__ = ["HeapTrimmer"]


class HeapTrimmer:
    """Collects garbage cycles, then trims the heap, every ``every_seconds`` while
    started (nothing when 0).

    ``trim``: the C library's ``malloc_trim(0)`` by default; ``collect``: a full
    ``gc.collect()`` by default (both injectable for tests); ``quiet``: whether no turn
    runs now (None: always quiet)."""

    def __init__(
        self,
        every_seconds: float,
        trim: Callable[[], int] | None = None,
        collect: Callable[[], int] = gc.collect,
        *,
        quiet: Callable[[], bool] | None = None,
        poll_seconds: float = 1.0,
    ) -> None:
        self.every_seconds = every_seconds
        self._trim = trim if trim is not None else malloc_trim()
        self._collect = collect
        self._quiet = quiet
        self._poll_seconds = poll_seconds
        self.waited_seconds = 0.0
        """How long the last round waited for a quiet moment."""
        self._task: asyncio.Task[None] | None = None
        self.trims = 0
        self.collections = 0
        self.last_seconds = 0.0
        """How long the last trim took."""
        self.last_collect_seconds = 0.0
        """How long the last full collection took (on the event loop)."""

    @property
    def active(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self.every_seconds > 0 and not self.active:
            self._task = asyncio.create_task(self._run(), name="heap-trim")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def collect_once(self) -> None:
        """One full collection, here on the event loop's thread."""
        started = time.perf_counter()
        self._collect()
        self.last_collect_seconds = time.perf_counter() - started
        self.collections += 1

    async def trim_once(self) -> None:
        """One trim on a worker thread."""
        trim = self._trim
        if trim is None:
            return
        started = time.perf_counter()
        await asyncio.to_thread(trim)
        self.last_seconds = time.perf_counter() - started
        self.trims += 1

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every_seconds)
            await self._until_quiet()
            try:
                self.collect_once()
                await self.trim_once()
            except Exception:
                logger.exception("heap trim failed")

    async def _until_quiet(self) -> None:
        """Wait while turns run, at most ``every_seconds``."""
        waited = 0.0
        quiet = self._quiet
        while quiet is not None and waited < self.every_seconds and not quiet():
            await asyncio.sleep(self._poll_seconds)
            waited += self._poll_seconds
        self.waited_seconds = waited
