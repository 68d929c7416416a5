"""The cyclic garbage collector's settings while a gateway runs.

CPython runs a young-generation pass every 700 net container allocations and a full
pass after ten middle ones. A turn allocates thousands of objects and every session's
lane stays in memory, so with the defaults a benchmark turn paid ≈ 0.2 ms of collection
on average, and a full pass walked ≈ 400,000 objects (≈ 100 ms) every few seconds, most
of them the modules, schemas and app built at start-up, which never become garbage.

:class:`GcTuning` applies two process-wide settings for the gateway's lifetime:

* a higher young-generation threshold (``[gateway] gc_threshold``): fewer passes, each
  finding the same garbage; fewer full passes follow from it;
* ``gc.freeze()`` once start-up is done (``[gateway] gc_freeze``): what is alive then
  moves to the permanent generation, which no pass walks.

:meth:`GcTuning.undo` restores the thresholds it found and unfreezes, so a process that
runs several gateways one after another (a test run) does not keep their objects.
"""

from __future__ import annotations

import gc

__all__ = ["GcTuning"]


class GcTuning:
    """Collector settings applied by :meth:`apply` and taken back by :meth:`undo`."""

    def __init__(self, *, threshold: int, freeze: bool) -> None:
        self.threshold = threshold
        """Young-generation threshold; 0 keeps the interpreter's."""
        self.freeze = freeze
        self._previous: tuple[int, int, int] | None = None
        self._frozen = False

    def apply(self) -> None:
        """Call once start-up is done (idempotent until :meth:`undo`)."""
        if self._previous is not None:
            return
        self._previous = gc.get_threshold()
        if self.threshold:
            _young, middle, old = self._previous
            gc.set_threshold(self.threshold, middle, old)
        if self.freeze:
            gc.collect()  # garbage left by start-up is freed, not frozen
            gc.freeze()
            self._frozen = True

    def undo(self) -> None:
        """Restore the thresholds found by :meth:`apply` and unfreeze what it froze."""
        if self._previous is None:
            return
        gc.set_threshold(*self._previous)
        self._previous = None
        if self._frozen:
            gc.unfreeze()
            self._frozen = False
