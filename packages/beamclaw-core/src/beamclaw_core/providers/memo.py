"""Per-message derived forms, computed once per message object.

Messages are frozen, so anything derived from one alone (its provider wire form, its
token estimate) never changes: a request about a 1,000-message history derives only
what the messages added since the last request need, instead of everything again.

Invariants:

* Keyed by message *identity*, never by value: an equal but distinct message is derived
  afresh (correct either way, since derivation is pure).
* An entry lives exactly as long as its message: a weak reference drops it when the
  message is collected (a view dropped on compaction takes its forms with it), so the
  memo never keeps a message alive and never grows beyond the messages in memory.
* A memoised value is shared between requests: callers must not mutate it (copy the
  containers they extend).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from beamclaw_core.messages import Message

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MemoStats:
    """``derived``: values computed (misses); ``reused``: values served from the memo."""

    derived: int
    reused: int
    size: int


class MessageMemo(Generic[T]):
    """``derive(message)``, remembered for as long as ``message`` lives."""

    def __init__(self, derive: Callable[[Message], T]) -> None:
        self._derive = derive
        self._entries: dict[int, tuple[weakref.ref[Message], T]] = {}
        self._derived = 0
        self._reused = 0

    def __call__(self, message: Message) -> T:
        key = id(message)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is message:
            self._reused += 1
            return entry[1]
        value = self._derive(message)
        self._derived += 1
        entries = self._entries

        def forget(ref: weakref.ref[Message], key: int = key) -> None:
            current = entries.get(key)
            if current is not None and current[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(message, forget), value)
        return value

    def stats(self) -> MemoStats:
        """Counters since creation (the seam tests count derivations through)."""
        return MemoStats(self._derived, self._reused, len(self._entries))
