"""Giving the heap memory a gateway freed back to the operating system.

glibc's ``malloc`` keeps what a process frees for its next allocations: after a burst
of turns the freed pages stay in the process's RSS, scattered between live blocks where
the heap's automatic trim (only at its top) never reaches them. Measured in a soak
(docs/faults.md): about 8 KiB a turn of RSS growth over the first thousands of turns
with no Python object surviving; ``malloc_trim(0)`` gave 4-7 MiB back each time.

:class:`HeapTrimmer` calls ``malloc_trim(0)`` every ``[gateway] heap_trim_seconds``.
Invariants: on a C library without ``malloc_trim`` (musl, macOS) it does nothing; a trim
runs on a worker thread, never on the event loop (it takes the allocator's locks for a
few milliseconds), and one at a time; a failed trim is logged and the next one tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from loguru import logger

from beamclaw_obs.heap import malloc_trim

__all__ = ["HeapTrimmer"]


class HeapTrimmer:
    """Trims the heap every ``every_seconds`` while started (nothing when 0)."""

    def __init__(self, every_seconds: float, trim: Callable[[], int] | None = None) -> None:
        self.every_seconds = every_seconds
        self._trim = trim if trim is not None else malloc_trim()
        self._task: asyncio.Task[None] | None = None
        self.trims = 0
        self.last_seconds = 0.0
        """How long the last trim took."""

    @property
    def active(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self.every_seconds > 0 and self._trim is not None and not self.active:
            self._task = asyncio.create_task(self._run(), name="heap-trim")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

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
            try:
                await self.trim_once()
            except Exception:
                logger.exception("heap trim failed")
