"""A database that is locked, full or failing, as every front end tells it.

Invariant: a :class:`~beamclaw_memory.StorageUnavailableError` (or a
:class:`~beamclaw_memory.DatabaseUnavailableError`: the database cannot be reached) is answered 503
``storage_unavailable`` with ``Retry-After`` (seconds) and a message naming the
database's state — never the URL or the driver's text, which stay in the log — on
``/v1`` (JSON and SSE alike: it happens before the stream starts), ``/api`` and every
other HTTP route, and as the ``/ws`` error frame of the message it refused.
"""

from __future__ import annotations

from beamclaw_gateway.errors import ApiError
from beamclaw_memory import DatabaseUnavailableError, StorageUnavailableError
from beamclaw_memory.errors import describe_unavailable

Unavailable = StorageUnavailableError | DatabaseUnavailableError
"""A write the database refused or could not take: both are answered the same way."""

CODE = "storage_unavailable"
RETRY_BUSY_SECONDS = 2
"""A lock passes in a moment (the other writer commits)."""
RETRY_FULL_SECONDS = 30
"""A full or failing disk needs someone to act."""
RETRY_UNREACHABLE_SECONDS = 10
"""A database server that went away is usually back (or failed over) soon."""


def _reason(exc: Unavailable) -> str:
    return "unreachable" if isinstance(exc, DatabaseUnavailableError) else exc.reason


def retry_after(exc: Unavailable) -> int:
    """Seconds a client should wait before trying again."""
    reason = _reason(exc)
    if reason == "busy":
        return RETRY_BUSY_SECONDS
    return RETRY_UNREACHABLE_SECONDS if reason == "unreachable" else RETRY_FULL_SECONDS


def client_message(exc: Unavailable) -> str:
    return f"{describe_unavailable(_reason(exc))}; try again in {retry_after(exc)} s"


def storage_unavailable(exc: Unavailable) -> ApiError:
    """The 503 answer to ``exc``."""
    return ApiError(
        503,
        client_message(exc),
        type="api_error",
        code=CODE,
        headers={"Retry-After": str(retry_after(exc))},
    )
