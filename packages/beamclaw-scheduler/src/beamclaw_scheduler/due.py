"""What the runner does with a job at ``now``, pure: which jobs are due, and what a
claim of one records (fire or not, and its next time).

Invariants (tested with an injected clock in ``tests/test_due.py``):

* A job is due only when active and its ``next_run_at`` is at or before ``now``.
* A claim always moves ``next_run_at`` strictly past ``now`` (or to None: the job never
  fires again), so the same due time is never claimed twice, whatever the process.
* A fire later than ``grace`` after its time is *missed* (the gateway was down):
  ``run_once`` fires it once — however many times it was missed — and ``skip`` does
  not fire it; either way the next time is the first one after ``now``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from beamclaw_scheduler.settings import MissedFires
from beamclaw_scheduler.specs import Spec, next_fire


@dataclass(frozen=True, slots=True)
class Timing:
    """What the due decision needs of a job."""

    job_id: str
    status: str
    next_run_at: float | None


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of claiming a due job at ``now``."""

    fire: bool
    """Run the prompt now."""
    missed: bool
    """Its time passed more than ``grace`` ago."""
    next_run_at: float | None
    """The job's next time (None: it is done)."""


def due(jobs: Iterable[Timing], now: float) -> list[str]:
    """Ids of the jobs due at ``now``, the longest-waiting first."""
    ready = [j for j in jobs if j.status == "active" and j.next_run_at is not None]
    ready = [j for j in ready if j.next_run_at is not None and j.next_run_at <= now]
    ready.sort(key=lambda j: (j.next_run_at, j.job_id))
    return [j.job_id for j in ready]


def claim(spec: Spec, scheduled_at: float, now: float, policy: MissedFires, grace: float) -> Claim:
    """What claiming a job due at ``scheduled_at`` records at ``now``."""
    missed = now - scheduled_at > grace
    fire = not missed or policy == "run_once"
    return Claim(fire, missed, next_fire(spec, max(now, scheduled_at)))
