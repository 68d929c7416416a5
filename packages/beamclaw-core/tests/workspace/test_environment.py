"""The [user:environment] block and timezone resolution."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from beamclaw_core.workspace import (
    environment_block,
    format_elapsed,
    resolve_timezone,
    timezone_from_user_md,
)

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=-5), "just now"),
        (timedelta(seconds=59), "just now"),
        (timedelta(minutes=1), "1 minute"),
        (timedelta(minutes=5, seconds=30), "5 minutes"),
        (timedelta(hours=1), "1 hour"),
        (timedelta(hours=2, minutes=5), "2 hours 5 minutes"),
        (timedelta(days=1, minutes=5), "1 day"),
        (timedelta(days=3, hours=4, minutes=59), "3 days 4 hours"),
    ],
)
def test_format_elapsed(delta: timedelta, text: str) -> None:
    assert format_elapsed(delta) == text


@pytest.mark.parametrize(
    "user_md",
    [
        "- **Timezone:** Europe/Paris",
        "Timezone: Europe/Paris",
        "* timezone = Europe/Paris (CET)",
        "- **Time zone:** `Europe/Paris`",
        "- **Timezone:** (unknown yet)\n\nTimezone: Europe/Paris",
    ],
)
def test_timezone_from_user_md(user_md: str) -> None:
    zone = timezone_from_user_md(user_md)
    assert zone is not None
    assert zone.key == "Europe/Paris"


@pytest.mark.parametrize(
    "user_md", ["- **Timezone:** (unknown yet)", "Timezone: Mars/Olympus", "no zone here", ""]
)
def test_no_timezone_in_user_md(user_md: str) -> None:
    assert timezone_from_user_md(user_md) is None


def test_resolution_order() -> None:
    user_md = "Timezone: Asia/Tokyo"
    assert resolve_timezone("Europe/Berlin", user_md).source == "config"
    assert resolve_timezone(None, user_md).name == "Asia/Tokyo"
    invalid = resolve_timezone("Not/AZone", user_md)
    assert (invalid.name, invalid.source) == ("Asia/Tokyo", "USER.md")
    fallback = resolve_timezone(None, None)
    assert (fallback.name, fallback.source) == ("UTC", "default")


def test_block_with_unknown_timezone_says_so() -> None:
    block = environment_block(now=NOW, last_message_at=None, timezone=resolve_timezone(None, None))
    assert block.splitlines() == [
        "[user:environment]",
        "local_time: 2026-07-01 12:00 (Wednesday), UTC (UTC+00:00)",
        "timezone_note: the user's timezone is not known; times are UTC. Ask for it when it "
        "matters and record it in USER.md.",
        "since_last_message: none (this is the first message of the conversation)",
    ]


def test_block_daylight_saving_offset() -> None:
    block = environment_block(
        now=NOW,
        last_message_at=NOW - timedelta(minutes=7),
        timezone=resolve_timezone("America/Los_Angeles", None),
    )
    assert "local_time: 2026-07-01 05:00 (Wednesday), America/Los_Angeles (UTC-07:00)" in block
    assert "since_last_message: 7 minutes" in block
    assert "timezone_note" not in block


def test_naive_last_message_is_rejected() -> None:
    with pytest.raises(ValueError, match="last_message_at"):
        environment_block(
            now=NOW,
            last_message_at=datetime(2026, 7, 1),
            timezone=resolve_timezone(None, None),
        )
