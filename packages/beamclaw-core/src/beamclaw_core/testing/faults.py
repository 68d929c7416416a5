"""A database that fails on demand: store outages for tests of what a failed write does.

:class:`FailingDatabase` is a real :class:`~beamclaw_memory.Database` (migrations, reads and
writes go to the real SQLite/PostgreSQL database) whose writes raise
:class:`~beamclaw_memory.DatabaseUnavailableError` (or the error ``refusal`` makes) while
:attr:`~FailingDatabase.failing` is set (or for the next :attr:`~FailingDatabase.fail_next` writes), before anything of the unit of work runs: the write is lost, as in an outage.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from beamclaw_memory import Database, DatabaseUnavailableError, Unit

T = TypeVar("T")


class FailingDatabase(Database):
    """A :class:`~beamclaw_memory.Database` whose writes fail on demand: while
    :attr:`failing` is set, and for the next :attr:`fail_next` writes."""

    def __init__(
        self, url: str, *, refusal: Callable[[str], Exception] | None = None, **kwargs: Any
    ) -> None:
        """``refusal(display_url)``: the error a failing write raises (default: the
        database is unreachable)."""
        super().__init__(url, **kwargs)
        self._refusal = refusal or _unreachable
        self.failing = False
        """Set it (e.g. from a scripted provider's rule) to make every write fail."""
        self.fail_next = 0
        """Make the next this many writes fail (then writes succeed again)."""
        self.failed_writes = 0
        """How many writes failed so far."""

    def write(self, work: Callable[[Unit], T]) -> Coroutine[Any, Any, T]:
        if self.failing or self.fail_next > 0:
            self.fail_next = max(0, self.fail_next - 1)
            self.failed_writes += 1
            return _fail(self._refusal(self.display_url))
        return super().write(work)


def _unreachable(url: str) -> Exception:
    return DatabaseUnavailableError(url, "injected write failure")


async def _fail(error: Exception) -> Any:
    raise error
