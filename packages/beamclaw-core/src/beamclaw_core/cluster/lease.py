"""Pure lease decisions: what a grant means for what this node has cached.

A lease's epoch grows by one with every grant (Redis ``INCR``, from 1; the single-node link
grants 0 every time). A node keeps the last epoch it was granted per session; when its
next grant follows it directly, nobody else owned the session in between and its cached
view and state are still the truth; otherwise — and on a first grant above 0, since the
lane may have been loaded while another node wrote — it must read them again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Claim:
    """This node owns ``session_id`` under ``epoch``; ``stale``: another node owned it
    since this node last did (reload what is cached)."""

    session_id: str
    epoch: int
    stale: bool


def claim_after(session_id: str, previous: int | None, granted: int) -> Claim:
    """The claim a grant of ``granted`` makes, after this node last held ``previous``."""
    if previous is None:
        return Claim(session_id, granted, stale=granted > 0)
    return Claim(session_id, granted, stale=granted not in (previous, previous + 1))


def renew_interval(lease_seconds: float) -> float:
    """How often a held lease is renewed: three times per lease, so one late renewal
    never lets it lapse."""
    return lease_seconds / 3


def sweep_interval(lease_seconds: float) -> float:
    """How often a node looks for sessions whose owner died (their lease expired)."""
    return lease_seconds / 2
