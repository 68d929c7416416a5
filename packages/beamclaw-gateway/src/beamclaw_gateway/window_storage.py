"""An in-process moving-window storage for ``limits`` (``storage_uri = "memory://"``).

``limits``' own async memory storage schedules an expiry pass (a task that hands a bisect
to a worker thread) on every hit: ≈ 0.1 ms of CPU per request, a third of the rate
limiter's share of a turn. This storage implements the same extension point
(:class:`limits.aio.storage.Storage` + ``MovingWindowSupport``) with one deque of
timestamps per key, trimmed on access — no timers, no threads — and a sweep of idle keys
at most once a minute. The moving-window *strategy* stays ``limits``' own.

Invariants: a key's deque holds the acquisition times of its current window in order
(oldest left); at most ``limit`` of them are inside the window after any acquire.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from limits.aio.storage import MovingWindowSupport, Storage

SWEEP_SECONDS = 60.0


class WindowStorage(Storage, MovingWindowSupport):
    """Moving windows in process memory (one gateway process; Redis for several)."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self._clock = clock
        self._windows: dict[str, deque[float]] = {}
        self._expiry: dict[str, float] = {}
        self._counters: dict[str, tuple[int, float]] = {}
        self._swept = clock()

    @property
    def tracked(self) -> int:
        """Keys with a window or counter in memory (idle ones go at the next sweep)."""
        return len(self._windows) + len(self._counters)

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return ValueError

    # -- moving window -----------------------------------------------------------------

    def _window(self, key: str, expiry: float, now: float) -> deque[float]:
        if now - self._swept >= SWEEP_SECONDS:
            self._sweep(now)  # first: it may drop this very key when idle
        window = self._windows.get(key)
        if window is None:
            window = self._windows[key] = deque()
        self._expiry[key] = expiry
        cutoff = now - expiry
        while window and window[0] <= cutoff:
            window.popleft()
        return window

    def _sweep(self, now: float) -> None:
        self._swept = now
        for key, window in list(self._windows.items()):
            if not window or window[-1] <= now - self._expiry.get(key, 0.0):
                del self._windows[key]
                self._expiry.pop(key, None)
        for key, (_count, until) in list(self._counters.items()):
            if until <= now:
                del self._counters[key]

    async def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        now = self._clock()
        window = self._window(key, expiry, now)
        if len(window) + amount > limit:
            return False
        window.extend([now] * amount)
        return True

    async def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        now = self._clock()
        window = self._window(key, expiry, now)
        if not window:
            return now, 0
        return window[0], len(window)

    # -- counters (fixed-window strategies; not used by the gateway, kept correct) -----

    async def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        now = self._clock()
        count, until = self._counters.get(key, (0, now + expiry))
        if until <= now:
            count, until = 0, now + expiry
        self._counters[key] = (count + amount, until)
        return count + amount

    async def get(self, key: str) -> int:
        count, until = self._counters.get(key, (0, 0.0))
        return count if until > self._clock() else 0

    async def get_expiry(self, key: str) -> float:
        return self._counters.get(key, (0, self._clock()))[1]

    async def check(self) -> bool:
        return True

    async def reset(self) -> int | None:
        cleared = len(self._windows) + len(self._counters)
        self._windows.clear()
        self._expiry.clear()
        self._counters.clear()
        return cleared

    async def clear(self, key: str) -> None:
        self._windows.pop(key, None)
        self._expiry.pop(key, None)
        self._counters.pop(key, None)
