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
  moves to the permanent generation, which no pass walks. Only the young and middle
  generations are collected first: a full pass there costs 0.1-0.2 s of start-up and
  finds nothing (what reached the old generation during imports is alive);
* the collector is on once a tuning is applied: ``beamclaw serve`` turns it off while it
  imports and starts (:func:`pause_for_startup`): some 260 passes over the growing
  imported world cost ≈ 0.18 s, a tenth of the start-up, to free next to nothing. With
  the collector paused, everything start-up built is still in the young generation, so
  the one pass before the freeze walks all of it (≈ 0.1 s): a runtime started paused
  applies its tuning once it listens and has warmed (:meth:`GatewayRuntime.warm`), not
  before ``/ready``.

:meth:`GcTuning.undo` of the last tuning still applied restores the thresholds the first
one found and unfreezes, so a process that runs several gateways (a test run) keeps
neither their objects nor their settings.
"""

from __future__ import annotations

import gc

__all__ = ["GcTuning", "pause_for_startup", "paused_for_startup"]


def pause_for_startup() -> None:
    """Turn the collector off until a :class:`GcTuning` is applied (the start-up's
    objects live as long as the process; reference counting still frees the rest)."""
    gc.disable()
    _PAUSED[:] = [True]


def paused_for_startup() -> bool:
    """True from :func:`pause_for_startup` until a tuning is applied."""
    return bool(_PAUSED)


class GcTuning:
    """Collector settings applied by :meth:`apply` and taken back by :meth:`undo`.

    The settings are the process's, so tunings nest: the first one applied records what
    it found, and the interpreter's settings come back when the last one is undone
    (gateways started and stopped in any order in one process)."""

    def __init__(self, *, threshold: int, freeze: bool) -> None:
        self.threshold = threshold
        """Young-generation threshold; 0 keeps the interpreter's."""
        self.freeze = freeze

    def apply(self) -> None:
        """Call once start-up is done (idempotent until :meth:`undo`)."""
        if self in _ACTIVE:
            return
        _PAUSED.clear()
        if not _ACTIVE:
            _SAVED[:] = [gc.get_threshold()]
            _WAS_ENABLED[:] = [gc.isenabled()]
        _ACTIVE.append(self)
        gc.enable()
        if self.threshold:
            _young, middle, old = gc.get_threshold()
            gc.set_threshold(self.threshold, middle, old)
        if self.freeze:
            # recent start-up garbage is freed, not frozen; the old generation is not
            # walked (a full pass over the imported world took 0.1-0.2 s before /ready
            # and found nothing to free)
            gc.collect(1)
            gc.freeze()

    def undo(self) -> None:
        """Take this tuning back; the last one restores what the first one found."""
        if self not in _ACTIVE:
            return
        _ACTIVE.remove(self)
        if not _ACTIVE:
            gc.set_threshold(*_SAVED.pop())
            gc.unfreeze()
            if not _WAS_ENABLED.pop():
                gc.disable()


_ACTIVE: list[GcTuning] = []
"""Tunings applied and not undone, in order."""
_SAVED: list[tuple[int, int, int]] = []
"""The interpreter's thresholds found by the first tuning applied."""
_WAS_ENABLED: list[bool] = []
"""Whether the collector was on when the first tuning was applied."""
_PAUSED: list[bool] = []
"""``[True]`` while :func:`pause_for_startup`'s pause holds."""
