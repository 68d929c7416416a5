"""Moving windows in process memory (``[gateway.rate_limit] storage_uri = "memory://"``).

One deque of hit times per key, trimmed on access, no timers and no threads, and a sweep
of idle keys at most once a minute. It answers a hit and the window's state in one
synchronous call: the rate limiter's share of a request is a few dict and deque
operations (``limits``' own async memory storage scheduled an expiry task, handed to a
worker thread, on every hit).

Invariants: a key's deque holds the hit times of its current window in order (oldest
left); at most ``limit`` of them are inside the window after any :meth:`hit`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Hashable

SWEEP_SECONDS = 60.0


class MovingWindows:
    """Moving windows per key (one gateway process; Redis for several)."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._windows: dict[Hashable, deque[float]] = {}
        self._expiry: dict[Hashable, float] = {}
        self._swept = clock()

    @property
    def tracked(self) -> int:
        """Keys with a window in memory (idle ones go at the next sweep)."""
        return len(self._windows)

    def _window(self, key: Hashable, expiry: float, now: float) -> deque[float]:
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

    def hit(
        self, key: Hashable, limit: int, expiry: float, cost: int = 1
    ) -> tuple[bool, int, float]:
        """Count ``cost`` hits of ``key`` if they fit in ``limit`` per ``expiry`` seconds.

        Returns whether they did, the hits still free in the window, and when (clock
        time) the oldest hit in it leaves (now, for an empty window): ``limits``' moving
        window ``hit`` then ``get_window_stats``.
        """
        now = self._clock()
        window = self._window(key, expiry, now)
        allowed = cost <= limit and len(window) + cost <= limit
        if allowed:
            window.extend([now] * cost)
        start = window[0] if window else now
        return allowed, limit - len(window), start + expiry

    def reset(self) -> int:
        """Forget every window; returns how many keys were tracked."""
        cleared = len(self._windows)
        self._windows.clear()
        self._expiry.clear()
        return cleared
