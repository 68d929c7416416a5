"""The in-process moving windows (``limits``' moving-window rule, synchronously)."""

from __future__ import annotations

from beamclaw_gateway.window_storage import SWEEP_SECONDS, MovingWindows


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_a_moving_window_frees_slots_as_old_hits_age_out() -> None:
    clock = Clock()
    windows = MovingWindows(clock=clock)
    for step in range(3):
        clock.now += 1
        assert windows.hit("a", 3, 10)[0], step
    allowed, remaining, reset_at = windows.hit("a", 3, 10)  # 3 in the last 10 s
    assert (allowed, remaining, reset_at) == (False, 0, 1_001.0 + 10)
    assert windows.hit("b", 3, 10)[0]  # keys are independent
    clock.now = 1_011.0  # the first hit (at 1001) is out
    assert windows.hit("a", 3, 10) == (True, 0, 1_002.0 + 10)
    assert not windows.hit("a", 3, 10)[0]


def test_costs_bigger_than_the_limit_and_partial_costs() -> None:
    windows = MovingWindows(clock=Clock())
    assert windows.hit("k", 2, 10, cost=3) == (False, 2, 1_010.0)  # an empty window
    assert windows.hit("k", 2, 10, cost=2)[:2] == (True, 0)
    assert not windows.hit("k", 2, 10)[0]


def test_idle_keys_are_swept_and_reset_clears_everything() -> None:
    clock = Clock()
    windows = MovingWindows(clock=clock)
    windows.hit("old", 5, 10)
    clock.now += SWEEP_SECONDS + 1
    windows.hit("new", 5, 10)  # triggers the sweep
    assert windows.tracked == 1  # "old" is gone from memory, "new"'s hit is kept
    assert windows.hit("new", 5, 10)[1] == 3
    assert windows.reset() == 1
    assert windows.tracked == 0


def test_a_scripted_sequence() -> None:
    """3 per 10 s: hits at these offsets, worked out by hand."""
    clock = Clock()
    windows = MovingWindows(clock=clock)
    ours: list[tuple[bool, int]] = []
    for offset in (0.0, 0.5, 1.0, 1.5, 9.0, 10.4, 10.6, 11.2, 25.0, 25.1):
        clock.now = 1_000.0 + offset
        allowed, remaining, _ = windows.hit("k", 3, 10)
        ours.append((allowed, remaining))
    assert ours == [
        (True, 2),
        (True, 1),
        (True, 0),
        (False, 0),
        (False, 0),
        (True, 0),
        (True, 0),
        (True, 0),
        (True, 2),
        (True, 1),
    ]
