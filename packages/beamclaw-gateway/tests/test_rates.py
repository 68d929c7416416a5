"""Rate notation: parsed as the ``limits`` library parses it."""

from __future__ import annotations

import pytest
from limits import parse_many

from beamclaw_gateway.rates import Rate, parse_rates

VALID = [
    "120/minute",
    "6000/minute",
    "10/second; 120/minute",
    "1 per second, 5 per 2 minutes | 100 per day",
    "5 PER 3 Hours",
    "7/months",
    "1/year",
    "  3 / 10 seconds  ",
]
INVALID = [
    "",
    "often",
    "5/fortnight",
    "per minute",
    "5/",
    "1/minute;",
    "-1/minute",
    "1/minute 2/hour",
]


@pytest.mark.parametrize("text", VALID)
def test_a_rate_reads_as_limits_reads_it(text: str) -> None:
    theirs = parse_many(text)
    ours = parse_rates(text)
    assert [(r.amount, r.seconds, str(r)) for r in ours] == [
        (item.amount, item.get_expiry(), str(item)) for item in theirs
    ]


@pytest.mark.parametrize("text", INVALID)
def test_what_limits_refuses_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_many(text)
    with pytest.raises(ValueError):
        parse_rates(text)


def test_a_rate_has_its_window() -> None:
    assert parse_rates("5 per 2 minutes") == [Rate(5, 2, "minute")]
    assert Rate(5, 2, "minute").seconds == 120
