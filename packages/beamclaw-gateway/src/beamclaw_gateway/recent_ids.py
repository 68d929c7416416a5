"""A bounded memory of message ids already seen, so a message sent twice runs once.

Invariant: :meth:`RecentIds.first_sighting` is True exactly once per key while the key is
among the last ``window`` keys seen (a key seen again moves to the newest end), or since
it was :meth:`RecentIds.forget`-ten (its message never started: it may come again).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable


class RecentIds:
    """The last ``window`` keys seen, oldest dropped first."""

    def __init__(self, window: int) -> None:
        self.window = window
        self._seen: OrderedDict[Hashable, None] = OrderedDict()

    def first_sighting(self, key: Hashable) -> bool:
        """True the first time ``key`` is seen (bounded memory)."""
        if key in self._seen:
            self._seen.move_to_end(key)
            return False
        self._seen[key] = None
        while len(self._seen) > self.window:
            self._seen.popitem(last=False)
        return True

    def forget(self, key: Hashable) -> None:
        """``key``'s message did not start after all: its next sighting is a first one."""
        self._seen.pop(key, None)
