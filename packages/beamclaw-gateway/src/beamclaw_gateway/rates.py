"""Rate limits in ``limits`` notation (``"10/second; 120 per 2 minutes"``), parsed here.

The grammar is the ``limits`` library's (``limits.parse_many``): one or more
``<amount> (/|per) [<multiples>] <granularity>[s]`` separated by ``,``, ``;`` or ``|``,
case-insensitive; a month is 30 days and a year 12 months, as there. Parsing here keeps
that library out of a gateway that counts in process memory (it is imported only for the
Redis storage): ~50 modules and ~1.6 MB at rest. A test compares both parsers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GRANULARITY_SECONDS: dict[str, int] = {
    "year": 12 * 30 * 24 * 3600,
    "month": 30 * 24 * 3600,
    "day": 24 * 3600,
    "hour": 3600,
    "minute": 60,
    "second": 1,
}

_ONE = r"\s*([0-9]+)\s*(?:/|\s*per\s*)\s*([0-9]+)?\s*([a-z]+)\s*"
_ONE_RE = re.compile(_ONE, re.IGNORECASE)
_ALL_RE = re.compile(rf"^{_ONE}(?:[,;|]{_ONE})*$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[,;|]")


@dataclass(frozen=True, slots=True)
class Rate:
    """At most ``amount`` hits in any ``multiples`` × ``granularity`` long window."""

    amount: int
    multiples: int
    granularity: str

    @property
    def seconds(self) -> int:
        return self.multiples * GRANULARITY_SECONDS[self.granularity]

    def __str__(self) -> str:
        """As ``limits`` writes it (``"120 per 1 minute"``), for events and the log."""
        return f"{self.amount} per {self.multiples} {self.granularity}"


def _granularity(word: str) -> str:
    lowered = word.lower()
    name = (
        lowered[:-1] if lowered.endswith("s") and lowered[:-1] in GRANULARITY_SECONDS else lowered
    )
    if name not in GRANULARITY_SECONDS:
        raise ValueError(f"no granularity matched for {word}")
    return name


def parse_rates(text: str) -> list[Rate]:
    """Every rate in ``text``, in order.

    Raises:
        ValueError: ``text`` is not in ``limits`` notation.
    """
    if not _ALL_RE.match(text):
        raise ValueError(f"couldn't parse rate limit string '{text}'")
    rates: list[Rate] = []
    for part in _SEPARATORS.split(text):
        match = _ONE_RE.match(part)
        if match:
            amount, multiples, word = match.groups()
            rates.append(Rate(int(amount), int(multiples) if multiples else 1, _granularity(word)))
    return rates
