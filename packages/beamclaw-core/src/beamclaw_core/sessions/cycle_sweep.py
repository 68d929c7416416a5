"""Freeing the lanes that left memory: their objects form reference cycles.

A lane's parts call back into it (its queue publishes through it, its turn ports close
over it, its cancelled worker's traceback holds its frames), so a lane that leaves memory
is freed only by the cyclic collector's full pass, never by reference counting. With the
gateway's collector tuning (``[gateway] gc_threshold`` 10,000, start-up frozen) and turns
that free nearly all they allocate, CPython's own full pass came about once per 14,000
sessions: lanes evicted long ago piled up, ≈ 3 KB of live-looking heap each plus what they
fragment (issue 18, measured with ``gc.DEBUG_SAVEALL``: 71 objects per finished session).

:class:`CycleSweep` asks for a full pass once the lanes evicted since the last one reach
:data:`MIN_EVICTED` and a quarter of those still loaded — CPython's own rule for its
full pass (garbage up to a quarter of what lives), counted in lanes — so its cost per
evicted lane stays flat however many lanes are loaded, and a gateway evicting a few
lanes a minute does not pay one per maintenance pass.

A full pass made by anyone else (CPython's own, the gateway's heap trimmer's every
``[gateway] heap_trim_seconds``) freed the lanes evicted before it: the count starts
again from there, so the sweep never repeats a pass that just ran.

A full pass stops the process for its whole length (≈ 100 ms with a few hundred sessions
loaded, measured in ``bench streams``), and every stream then in flight stalls for as
long. So a pass that falls due while turns run waits for a quiet maintenance pass, until
:data:`DEFER_LIMIT` times the lanes that made it due have piled up (a gateway that is
never quiet still frees them, in fewer, larger passes).

Invariants: pure counting plus the injected ``collect`` and ``full_passes``; nothing is
collected while fewer than :data:`MIN_EVICTED` lanes have been evicted since the last
full pass, whoever made it, nor while turns run and fewer than :data:`DEFER_LIMIT` times
the due count have.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

MIN_EVICTED = 128
"""Evicted lanes that may wait for a full pass (≈ 1 MB): a pass walks every tracked
object not frozen at start-up (≈ 5-10 ms at rest), so fewer, larger sweeps keep its
cost per lane small and its pauses rare (at most one per maintenance pass)."""
LOADED_SHARE = 0.25
"""Evicted lanes, as a share of the loaded ones, that may wait for a full pass."""
DEFER_LIMIT = 4
"""While turns run, a due pass waits until this many times its due count of lanes."""


class CycleSweep:
    """Counts evicted lanes; runs ``collect`` (a full pass) when enough have piled up."""

    def __init__(
        self,
        collect: Callable[[], object] = gc.collect,
        full_passes: Callable[[], int] = lambda: int(gc.get_stats()[2]["collections"]),
    ) -> None:
        """``full_passes()``: how many full passes the process has made so far."""
        self._collect = collect
        self._full_passes = full_passes
        self._seen = full_passes()
        self.pending = 0
        """Lanes evicted since the last full pass."""
        self.sweeps = 0

    def evicted(self, count: int, *, loaded: int, busy: bool = False) -> bool:
        """Note ``count`` lanes gone (0: a check of those still pending) with ``loaded``
        still in memory, ``busy`` when turns run now; True when this ran a full pass."""
        passes = self._full_passes()
        if passes != self._seen:  # another full pass freed what was evicted before it
            self._seen, self.pending = passes, 0
        self.pending += count
        due = max(MIN_EVICTED, loaded * LOADED_SHARE)
        if self.pending < due or (busy and self.pending < due * DEFER_LIMIT):
            return False
        self._collect()
        self._seen = self._full_passes()
        self.pending = 0
        self.sweeps += 1
        return True
