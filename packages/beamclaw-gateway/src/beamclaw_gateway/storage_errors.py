"""A database that is locked, full or failing, as every front end tells it.

Invariant: a :class:`~beamclaw_memory.StorageUnavailableError` is answered 503
``storage_unavailable`` with ``Retry-After`` (seconds) and a message naming the
database's state — never the URL or the driver's text, which stay in the log — on
``/v1`` (JSON and SSE alike: it happens before the stream starts), ``/api`` and every
other HTTP route, and as the ``/ws`` error frame of the message it refused.
"""

from __future__ import annotations

from beamclaw_gateway.errors import ApiError
from beamclaw_memory import StorageUnavailableError
from beamclaw_memory.errors import describe_unavailable

CODE = "storage_unavailable"
RETRY_BUSY_SECONDS = 2
"""A lock passes in a moment (the other writer commits)."""
RETRY_FULL_SECONDS = 30
"""A full or failing disk needs someone to act."""


def retry_after(exc: StorageUnavailableError) -> int:
    """Seconds a client should wait before trying again."""
    return RETRY_BUSY_SECONDS if exc.reason == "busy" else RETRY_FULL_SECONDS


def client_message(exc: StorageUnavailableError) -> str:
    return f"{describe_unavailable(exc.reason)}; try again in {retry_after(exc)} s"


def storage_unavailable(exc: StorageUnavailableError) -> ApiError:
    """The 503 answer to ``exc``."""
    return ApiError(
        503,
        client_message(exc),
        type="api_error",
        code=CODE,
        headers={"Retry-After": str(retry_after(exc))},
    )
