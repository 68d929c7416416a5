"""The ``[user:environment]`` block: the user's local time and the time since the last message.

Pure functions: the caller passes ``now`` and ``last_message_at`` (aware datetimes), so the
block is deterministic and testable. The timezone is, in order: the one given by the caller
(configuration), the ``Timezone:`` line of USER.md, else UTC — in which case the block says
the user's timezone is unknown so the agent can ask for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

ENVIRONMENT_HEADER = "[user:environment]"

# "- **Timezone:** Europe/Berlin", "Timezone: America/New_York", "* timezone = UTC"
_TZ_LINE = re.compile(
    r"^[ \t]*(?:[-*+][ \t]*)?(?:\*\*|__)?time[ _-]?zone(?:\*\*|__)?[ \t]*[:=][ \t]*"
    r"(?:\*\*|__)?[ \t]*`?(?P<name>[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+)*)",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class UserTimezone:
    """A resolved timezone and where it came from (``config``, ``USER.md`` or ``default``)."""

    zone: ZoneInfo
    source: str

    @property
    def name(self) -> str:
        return self.zone.key


def load_zone(name: str) -> ZoneInfo | None:
    """The IANA zone called ``name``, or None when unknown or malformed."""
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def timezone_from_user_md(text: str) -> ZoneInfo | None:
    """The first valid IANA zone named on a ``Timezone:`` line of USER.md, if any."""
    for match in _TZ_LINE.finditer(text):
        zone = load_zone(match.group("name"))
        if zone is not None:
            return zone
    return None


def resolve_timezone(configured: str | None, user_md: str | None) -> UserTimezone:
    """Config first, then USER.md, then UTC. An invalid configured name falls through."""
    if configured:
        zone = load_zone(configured)
        if zone is not None:
            return UserTimezone(zone, "config")
    if user_md:
        zone = timezone_from_user_md(user_md)
        if zone is not None:
            return UserTimezone(zone, "USER.md")
    return UserTimezone(ZoneInfo("UTC"), "default")


def format_elapsed(delta: timedelta) -> str:
    """``just now``, ``5 minutes``, ``2 hours 5 minutes``, ``3 days 4 hours`` (two units max)."""
    seconds = int(delta.total_seconds())
    if seconds < 60:
        return "just now"
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    values = ((days, "day"), (hours, "hour"), (rest // 60, "minute"))
    first = next(i for i, (count, _) in enumerate(values) if count)
    picked = [values[first]]
    if first + 1 < len(values) and values[first + 1][0]:
        picked.append(values[first + 1])
    return " ".join(f"{count} {unit}{'' if count == 1 else 's'}" for count, unit in picked)


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime")


def environment_block(
    *, now: datetime, last_message_at: datetime | None, timezone: UserTimezone
) -> str:
    """The ``[user:environment]`` block for a turn starting at ``now``.

    Raises:
        ValueError: ``now`` or ``last_message_at`` is naive.
    """
    _require_aware(now, "now")
    local = now.astimezone(timezone.zone)
    offset = local.strftime("%z")
    lines = [
        ENVIRONMENT_HEADER,
        f"local_time: {local:%Y-%m-%d %H:%M} ({local:%A}), "
        f"{timezone.name} (UTC{offset[:3]}:{offset[3:]})",
    ]
    if timezone.source == "default":
        lines.append(
            "timezone_note: the user's timezone is not known; times are UTC. Ask for it "
            "when it matters and record it in USER.md."
        )
    if last_message_at is None:
        lines.append("since_last_message: none (this is the first message of the conversation)")
    else:
        _require_aware(last_message_at, "last_message_at")
        lines.append(f"since_last_message: {format_elapsed(now - last_message_at)}")
    return "\n".join(lines)
