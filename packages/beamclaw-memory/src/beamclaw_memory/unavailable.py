"""Which driver errors mean "the database is unavailable for now" (pure).

Invariant: only a lock, a full disk (or quota, or memory) and a disk I/O error are
classified — SQLite by its message, PostgreSQL by its SQLSTATE — so a programming error
(no such table, a constraint) is never mistaken for a passing one.
"""

from __future__ import annotations

from typing import Literal

Reason = Literal["busy", "full", "io"]

_SQLITE: tuple[tuple[str, Reason], ...] = (
    ("database is locked", "busy"),
    ("database table is locked", "busy"),
    ("database is busy", "busy"),
    ("database or disk is full", "full"),
    ("disk i/o error", "io"),
)
_POSTGRES: dict[str, Reason] = {
    "55P03": "busy",  # lock_not_available (lock_timeout, NOWAIT)
    "57014": "busy",  # query_canceled (statement_timeout)
    "40P01": "busy",  # deadlock_detected
    "57P03": "busy",  # cannot_connect_now (starting up, recovering)
    "53000": "full",  # insufficient_resources
    "53100": "full",  # disk_full
    "53200": "full",  # out_of_memory
    "53300": "busy",  # too_many_connections
    "58030": "io",  # io_error
}


def unavailable_reason(exc: BaseException) -> Reason | None:
    """``busy``, ``full`` or ``io`` when ``exc`` (a SQLAlchemy ``DBAPIError``, or the
    driver's error under it) says so; else None."""
    for err in (exc, getattr(exc, "orig", None)):
        if err is None:
            continue
        state = getattr(err, "sqlstate", None) or getattr(err, "pgcode", None)
        if isinstance(state, str) and state in _POSTGRES:
            return _POSTGRES[state]
    text = str(getattr(exc, "orig", None) or exc).lower()
    return next((reason for needle, reason in _SQLITE if needle in text), None)
