"""When a job fires: one frozen spec per kind and :func:`next_fire`, pure.

Times are epoch seconds (UTC instants); a spec that speaks of wall-clock time (``cron``,
``random``) carries its IANA timezone and is evaluated in it. No clock is read here: the
caller says "after when".

Invariants (property-tested in ``tests/test_specs.py``):

* :func:`next_fire` returns an instant strictly after ``after``, or None when the job
  never fires again (an ``at`` in the past); iterating it never goes backwards.
* ``every``: fires at ``anchor + k * seconds`` — a restart or a late tick never shifts
  the grid.
* ``cron`` and ``random`` run on the local wall clock: each local time fires at most once.
  A local time the clock skips (spring forward) fires at the same distance after the
  jump (02:30 in a 02:00→03:00 gap fires at 03:30); a local time the clock repeats
  (fall back) fires once, at its first occurrence.
* ``random``: one slot per local day inside the window (which may wrap past midnight),
  drawn from a hash of the job's seed and the date — the same slot after any restart.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from beamclaw_scheduler.errors import InvalidScheduleError

Kind = Literal["at", "every", "cron", "random"]
KINDS: tuple[Kind, ...] = ("at", "every", "cron", "random")

_MAX_GAP = timedelta(hours=3)
"""Longer than any DST jump (Antarctica/Troll: 2 h)."""
_CRON_SEARCH_LIMIT = 2000
"""Local candidates examined for one cron fire (an every-minute job across a repeated
hour needs ~60)."""


@dataclass(frozen=True, slots=True)
class At:
    """Once, at ``at``."""

    at: float


@dataclass(frozen=True, slots=True)
class Every:
    """Every ``seconds``, on the grid that starts at ``anchor``."""

    seconds: int
    anchor: float


@dataclass(frozen=True, slots=True)
class Cron:
    """A five-field cron expression on ``timezone``'s wall clock."""

    expr: str
    timezone: str


@dataclass(frozen=True, slots=True)
class RandomIn:
    """Once a local day at a random minute of ``start``-``end`` (wrapping past midnight
    when ``end <= start``), the same minute for the same ``seed`` and date."""

    start: dtime
    end: dtime
    timezone: str
    seed: str


Spec = At | Every | Cron | RandomIn


def kind_of(spec: Spec) -> Kind:
    if isinstance(spec, At):
        return "at"
    if isinstance(spec, Every):
        return "every"
    if isinstance(spec, Cron):
        return "cron"
    return "random"


def zone(name: str) -> ZoneInfo:
    """The IANA zone ``name``; :class:`InvalidScheduleError` when unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidScheduleError("timezone", f"unknown timezone {name!r}") from exc


def to_utc(local: datetime, tz: ZoneInfo) -> float:
    """The instant of naive wall-clock ``local`` in ``tz`` (fold 0: a skipped time maps
    past the jump, a repeated one to its first occurrence)."""
    return local.replace(tzinfo=tz, fold=0).timestamp()


def to_local(instant: float, tz: ZoneInfo) -> datetime:
    """Naive wall-clock time of ``instant`` in ``tz``."""
    return datetime.fromtimestamp(instant, tz).replace(tzinfo=None)


# ---------------------------------------------------------------- next fire


def next_fire(spec: Spec, after: float) -> float | None:
    """The first instant strictly after ``after`` at which ``spec`` fires (see module)."""
    if isinstance(spec, At):
        return spec.at if spec.at > after else None
    if isinstance(spec, Every):
        if after < spec.anchor:
            return spec.anchor
        steps = int((after - spec.anchor) // spec.seconds) + 1
        return spec.anchor + steps * spec.seconds
    if isinstance(spec, Cron):
        return _next_cron(spec, after)
    return _next_random(spec, after)


def _next_cron(spec: Cron, after: float) -> float:
    from croniter import croniter

    tz = zone(spec.timezone)
    # croniter walks naive wall-clock time (its own DST handling is not used); each
    # candidate becomes an instant here (fold 0), which is monotonic in the wall time
    # except for times inside a spring-forward gap: they map past the jump, so a real
    # time just after the gap may come earlier. Only then look further ahead.
    walker = croniter(spec.expr, to_local(after, tz))
    for _ in range(_CRON_SEARCH_LIMIT):
        candidate: datetime = walker.get_next(datetime)
        instant = to_utc(candidate, tz)
        if instant <= after:
            continue
        if to_local(instant, tz) == candidate:
            return instant
        horizon = candidate + _MAX_GAP
        while (later := walker.get_next(datetime)) <= horizon:
            moment = to_utc(later, tz)
            if after < moment < instant:
                instant = moment
        return instant
    raise InvalidScheduleError("cron", f"cron {spec.expr!r} has no next time")


def random_slot(spec: RandomIn, day: date) -> datetime:
    """The naive local time ``spec`` fires in the window that opens on ``day``."""
    opens = datetime.combine(day, spec.start)
    closes = datetime.combine(day, spec.end)
    if closes <= opens:
        closes += timedelta(days=1)
    minutes = int((closes - opens).total_seconds() // 60)
    digest = hashlib.sha256(f"{spec.seed}|{day.isoformat()}".encode()).digest()
    offset = int.from_bytes(digest[:8], "big") % max(1, minutes)
    return opens + timedelta(minutes=offset)


def _next_random(spec: RandomIn, after: float) -> float:
    tz = zone(spec.timezone)
    day = to_local(after, tz).date() - timedelta(days=1)
    while True:
        instant = to_utc(random_slot(spec, day), tz)
        if instant > after:
            return instant
        day += timedelta(days=1)


# ---------------------------------------------------------------- parsing


def parse_hours(value: str, field: str) -> tuple[dtime, dtime]:
    """``"HH:MM-HH:MM"`` as two times (the second may be earlier: the window wraps)."""
    try:
        first, second = value.split("-")
        start, end = dtime.fromisoformat(first.strip()), dtime.fromisoformat(second.strip())
    except ValueError as exc:
        raise InvalidScheduleError(field, f"{field} is HH:MM-HH:MM, got {value!r}") from exc
    if start == end:
        raise InvalidScheduleError(field, f"{field} {value!r} is an empty window")
    return start, end


def in_window(local: dtime, start: dtime, end: dtime) -> bool:
    """``local`` lies in ``[start, end)``, wrapping past midnight when ``end < start``."""
    if start < end:
        return start <= local < end
    return local >= start or local < end


def parse_at(value: str, now: float) -> At:
    """An ISO-8601 time with an offset, in the future."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidScheduleError("at", f"at is an ISO-8601 time, got {value!r}") from exc
    if moment.tzinfo is None:
        raise InvalidScheduleError(
            "at", f"at {value!r} has no UTC offset (write e.g. 2026-05-01T09:00:00+02:00)"
        )
    instant = moment.timestamp()
    if instant <= now:
        now_text = datetime.fromtimestamp(now, UTC).isoformat(timespec="seconds")
        raise InvalidScheduleError("at", f"at {value!r} is in the past (now: {now_text})")
    return At(instant)


def parse_cron(expr: str, timezone: str) -> Cron:
    """A five-field cron expression that fires at least once (``0 0 30 2 *`` does not)."""
    from croniter import CroniterError, croniter

    fields = expr.split()
    if len(fields) != 5:
        raise InvalidScheduleError(
            "cron", f"cron takes 5 fields (minute hour day month weekday), got {expr!r}"
        )
    spec = Cron(" ".join(fields), timezone)
    zone(timezone)
    try:
        croniter(spec.expr, datetime(2000, 1, 1)).get_next(datetime)
    except (CroniterError, ValueError, KeyError) as exc:
        raise InvalidScheduleError("cron", f"invalid cron {expr!r}: {exc}") from exc
    return spec


def parse_every(seconds: int, minimum: int, now: float) -> Every:
    if seconds < minimum:
        raise InvalidScheduleError(
            "every_seconds", f"every_seconds must be at least {minimum}, got {seconds}"
        )
    return Every(seconds, now + seconds)


def parse_random(window: object, timezone: str, seed: str) -> RandomIn:
    """``{"between": "HH:MM-HH:MM"}``."""
    if not isinstance(window, dict) or not isinstance(window.get("between"), str):  # pyright: ignore[reportUnknownMemberType]
        raise InvalidScheduleError(
            "random_in", 'random_in is {"between": "HH:MM-HH:MM"} (local time, may wrap)'
        )
    between: str = window["between"]  # pyright: ignore[reportUnknownVariableType]
    start, end = parse_hours(between, "random_in.between")
    zone(timezone)
    return RandomIn(start, end, timezone, seed)


# ---------------------------------------------------------------- storage form


def spec_to_json(spec: Spec) -> dict[str, object]:
    if isinstance(spec, At):
        return {"at": spec.at}
    if isinstance(spec, Every):
        return {"seconds": spec.seconds, "anchor": spec.anchor}
    if isinstance(spec, Cron):
        return {"expr": spec.expr, "timezone": spec.timezone}
    return {
        "start": spec.start.isoformat("minutes"),
        "end": spec.end.isoformat("minutes"),
        "timezone": spec.timezone,
        "seed": spec.seed,
    }


def spec_from_json(kind: str, data: dict[str, object]) -> Spec:
    if kind == "at":
        return At(float(str(data["at"])))
    if kind == "every":
        return Every(int(str(data["seconds"])), float(str(data["anchor"])))
    if kind == "cron":
        return Cron(str(data["expr"]), str(data["timezone"]))
    return RandomIn(
        dtime.fromisoformat(str(data["start"])),
        dtime.fromisoformat(str(data["end"])),
        str(data["timezone"]),
        str(data["seed"]),
    )


def describe(spec: Spec) -> dict[str, object]:
    """The spec as the API shows it (times as ISO-8601)."""
    if isinstance(spec, At):
        return {"at": datetime.fromtimestamp(spec.at, UTC).isoformat()}
    if isinstance(spec, Every):
        return {"every_seconds": spec.seconds}
    if isinstance(spec, Cron):
        return {"cron": spec.expr, "timezone": spec.timezone}
    window = f"{spec.start.isoformat('minutes')}-{spec.end.isoformat('minutes')}"
    return {"random_in": {"between": window}, "timezone": spec.timezone}
