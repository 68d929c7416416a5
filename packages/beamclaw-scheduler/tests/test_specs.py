"""Next-fire computation for every kind, with instants chosen by the test (no clock):
DST transitions, wrap-around windows, cron edge cases, random slots (hypothesis)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_scheduler.errors import InvalidScheduleError
from beamclaw_scheduler.specs import (
    At,
    Cron,
    Every,
    RandomIn,
    in_window,
    next_fire,
    parse_at,
    parse_cron,
    parse_every,
    parse_hours,
    parse_random,
    random_slot,
    spec_from_json,
    spec_to_json,
)

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def at(tz: ZoneInfo, *parts: int) -> float:
    return datetime(*parts, tzinfo=tz).timestamp()  # type: ignore[misc]


def local(instant: float, tz: ZoneInfo) -> str:
    return datetime.fromtimestamp(instant, tz).isoformat()


def fires(spec: Cron | RandomIn | Every, start: float, count: int) -> list[float]:
    out: list[float] = []
    t = start
    for _ in range(count):
        n = next_fire(spec, t)
        assert n is not None
        out.append(n)
        t = n
    return out


def test_at_fires_once() -> None:
    assert next_fire(At(100.0), 50.0) == 100.0
    assert next_fire(At(100.0), 100.0) is None


def test_every_keeps_its_grid_whatever_the_lateness() -> None:
    spec = Every(60, 1000.0)
    assert next_fire(spec, 0.0) == 1000.0
    assert next_fire(spec, 1000.0) == 1060.0
    assert next_fire(spec, 1234.5) == 1240.0, "a late tick does not shift the grid"


def test_cron_daily_in_a_timezone() -> None:
    spec = Cron("0 9 * * *", "Europe/Berlin")
    assert local(next_fire(spec, at(BERLIN, 2026, 1, 10, 8, 59)) or 0, BERLIN) == (
        "2026-01-10T09:00:00+01:00"
    )
    assert local(next_fire(spec, at(BERLIN, 2026, 7, 10, 9, 0)) or 0, BERLIN) == (
        "2026-07-11T09:00:00+02:00"
    )


def test_cron_spring_forward_skipped_time_fires_after_the_jump() -> None:
    spec = Cron("30 2 * * *", "Europe/Berlin")
    times = fires(spec, at(BERLIN, 2026, 3, 28, 12, 0), 3)
    assert [local(t, BERLIN) for t in times] == [
        "2026-03-29T03:30:00+02:00",
        "2026-03-30T02:30:00+02:00",
        "2026-03-31T02:30:00+02:00",
    ]


def test_cron_spring_forward_a_real_time_after_the_gap_is_not_lost() -> None:
    spec = Cron("45 2,3 * * *", "Europe/Berlin")  # 02:45 is skipped, 03:45 is real
    times = fires(spec, at(BERLIN, 2026, 3, 29, 0, 0), 3)
    assert [local(t, BERLIN) for t in times] == [
        "2026-03-29T03:45:00+02:00",  # both land here: fired once
        "2026-03-30T02:45:00+02:00",
        "2026-03-30T03:45:00+02:00",
    ]


def test_cron_fall_back_repeated_hour_fires_once() -> None:
    spec = Cron("30 1 * * *", "America/New_York")
    times = fires(spec, at(NEW_YORK, 2026, 10, 31, 12, 0), 3)
    assert [local(t, NEW_YORK) for t in times] == [
        "2026-11-01T01:30:00-04:00",
        "2026-11-02T01:30:00-05:00",
        "2026-11-03T01:30:00-05:00",
    ]
    # asked from inside the repeated hour (second 01:10), the first 01:30 is past
    second_pass = datetime(2026, 11, 1, 1, 10, tzinfo=NEW_YORK, fold=1).timestamp()
    assert local(next_fire(spec, second_pass) or 0, NEW_YORK) == "2026-11-02T01:30:00-05:00"


def test_cron_every_half_hour_across_fall_back_is_strictly_increasing() -> None:
    spec = Cron("*/30 * * * *", "Europe/Berlin")
    times = fires(spec, at(BERLIN, 2026, 10, 25, 1, 0), 8)
    assert times == sorted(set(times))


def test_cron_edge_cases() -> None:
    leap = Cron("0 0 29 2 *", "UTC")
    assert datetime.fromtimestamp(next_fire(leap, at(UTC, 2026, 1, 1)) or 0, UTC).year == 2028
    last_weekday = Cron("0 12 * * 0", "Europe/Berlin")  # Sunday across a spring forward
    assert local(next_fire(last_weekday, at(BERLIN, 2026, 3, 26, 12)) or 0, BERLIN) == (
        "2026-03-29T12:00:00+02:00"
    )
    for bad in ("61 * * * *", "* * * *", "0 0 30 2 *", "a b c d e", "* * * * * *"):
        with pytest.raises(InvalidScheduleError) as info:
            parse_cron(bad, "UTC")
        assert info.value.field == "cron"
    with pytest.raises(InvalidScheduleError) as tz_info:
        parse_cron("0 9 * * *", "Nowhere/City")
    assert tz_info.value.field == "timezone"


def test_parsing_at_and_every() -> None:
    now = at(UTC, 2026, 1, 1)
    assert parse_at("2026-01-01T01:00:00+01:00", now - 1).at == now
    for bad in ("2025-12-31T23:00:00+00:00", "2026-02-01T00:00:00", "tomorrow"):
        with pytest.raises(InvalidScheduleError):
            parse_at(bad, now)
    assert parse_every(60, 60, now) == Every(60, now + 60)
    with pytest.raises(InvalidScheduleError, match="at least 60"):
        parse_every(59, 60, now)


def test_windows_wrap_past_midnight() -> None:
    start, end = parse_hours("22:00-06:00", "active_hours")
    assert in_window(dtime(23, 0), start, end) and in_window(dtime(5, 59), start, end)
    assert not in_window(dtime(6, 0), start, end) and not in_window(dtime(12, 0), start, end)
    start, end = parse_hours("08:00-22:00", "active_hours")
    assert in_window(dtime(8, 0), start, end) and not in_window(dtime(22, 0), start, end)
    with pytest.raises(InvalidScheduleError):
        parse_hours("08:00-08:00", "active_hours")


def test_specs_survive_storage() -> None:
    for spec in (
        At(1.5),
        Every(60, 10.0),
        Cron("0 9 * * 1-5", "Europe/Berlin"),
        parse_random({"between": "22:00-02:00"}, "UTC", "job1"),
    ):
        kind = type(spec).__name__
        restored = spec_from_json(
            {"At": "at", "Every": "every", "Cron": "cron", "RandomIn": "random"}[kind],
            spec_to_json(spec),
        )
        assert restored == spec


windows = st.tuples(
    st.integers(0, 23), st.integers(0, 59), st.integers(0, 23), st.integers(0, 59)
).filter(lambda w: (w[0], w[1]) != (w[2], w[3]))


@settings(max_examples=150, deadline=None)
@given(
    windows,
    st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]),
    st.text(min_size=1, max_size=12),
    st.integers(0, 3 * 365 * 86400),
)
def test_random_slots_lie_in_their_window_once_a_day(
    window: tuple[int, int, int, int], tz_name: str, seed: str, offset: int
) -> None:
    spec = RandomIn(dtime(window[0], window[1]), dtime(window[2], window[3]), tz_name, seed)
    tz = ZoneInfo(tz_name)
    start = at(UTC, 2025, 1, 1) + offset
    times = fires(spec, start, 4)
    assert times == sorted(set(times)) and times[0] > start
    for day in (date(2025, 1, 1) + timedelta(days=d) for d in range(0, 1000, 97)):
        slot = random_slot(spec, day)
        assert random_slot(spec, day) == slot, "the same slot after any restart"
        assert in_window(slot.time(), spec.start, spec.end)
    for t in times:
        assert in_window(
            datetime.fromtimestamp(t, tz).time().replace(second=0), spec.start, spec.end
        ) or _shifted_by_a_gap(t, tz)


def _shifted_by_a_gap(instant: float, tz: ZoneInfo) -> bool:
    """A slot in a skipped local time fires just past the jump (outside the window)."""
    before = datetime.fromtimestamp(instant - 3 * 3600, tz).utcoffset()
    return before != datetime.fromtimestamp(instant, tz).utcoffset()


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["*/7 * * * *", "0 2 * * *", "30 1 * * 0", "15 */3 1,15 * *"]),
    st.sampled_from(["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC"]),
    st.integers(0, 2 * 365 * 86400),
)
def test_cron_never_goes_backwards(expr: str, tz_name: str, offset: int) -> None:
    start = at(UTC, 2025, 1, 1) + offset
    times = fires(Cron(expr, tz_name), start, 6)
    assert times[0] > start and times == sorted(set(times))
