"""Per-message derived forms, computed once per message object.

Messages are frozen, so anything derived from one alone (its provider wire form, its
token estimate) never changes: a request about a 1,000-message history derives only
what the messages added since the last request need, instead of everything again.

Invariants:

* Keyed by message *identity*, never by value: an equal but distinct message is derived
  afresh (correct either way, since derivation is pure).
* An entry lives exactly as long as its message: a weak reference drops it when the
  message is collected (a view dropped on compaction takes its forms with it), so the
  memo never grows beyond the messages in memory. It keeps alive only the last list
  :meth:`MessageMemo.many` mapped (until the next call).
* A memoised value is shared between requests: callers must not mutate it (copy the
  containers they extend).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_
from typing import Generic, TypeVar, cast

from beamclaw_core.messages import Message

T = TypeVar("T")
_MISSING = object()


@dataclass(frozen=True, slots=True)
class MemoStats:
    """``derived``: values computed (misses); ``reused``: values served from the memo."""

    derived: int
    reused: int
    size: int


class MessageMemo(Generic[T]):
    """``derive(message)``, remembered for as long as ``message`` lives.

    Keyed by ``id(message)``: the weak reference's callback removes an entry while its
    message is being freed, before its id can be reused, so an entry under an id always
    belongs to the live object with that id. That makes a lookup one C-level dict access
    (:meth:`many` maps a whole history without a Python-level step per hit).
    """

    def __init__(self, derive: Callable[[Message], T]) -> None:
        self._derive = derive
        self._values: dict[int, T] = {}
        self._refs: dict[int, weakref.ref[Message]] = {}
        self._derived = 0
        self._reused = 0
        self._last_messages: list[Message] = []
        self._last_out: list[T] = []

    def __call__(self, message: Message) -> T:
        value = self._values.get(id(message), _MISSING)
        if value is _MISSING:
            return self._add(message)
        self._reused += 1
        return cast("T", value)

    def many(self, messages: Sequence[Message]) -> list[T]:
        """``[self(m) for m in messages]``, at C speed for the messages already seen.

        The last list mapped is remembered (its messages held): a list that extends it
        (the next request of the same conversation) reuses its values after one C-level
        pass comparing identities, and looks up only what is new. Identity, not
        equality: a message's ``==`` is pydantic's, which compares field by field, and
        a list that does not extend the last one (another turn's tail) would pay it for
        nothing; an equal but distinct message is looked up like any other.
        """
        listed = list(messages)
        last = self._last_messages
        known = len(last)
        if known and len(listed) >= known and all(map(is_, listed, last)):
            out = self._last_out[:known] + self._lookup(listed[known:])
        else:
            out = self._lookup(listed)
        self._last_messages, self._last_out = listed, out
        return out

    def _lookup(self, messages: Sequence[Message]) -> list[T]:
        values = self._values
        out: list[T | object] = list(map(values.get, map(id, messages), repeat(_MISSING)))
        misses = list(compress(range(len(out)), map(is_, out, repeat(_MISSING))))
        for i in misses:
            value = values.get(id(messages[i]), _MISSING)  # listed twice, or a race
            out[i] = self._add(messages[i]) if value is _MISSING else value
        self._reused += len(out) - len(misses)
        return cast("list[T]", out)

    def _add(self, message: Message) -> T:
        value = self._derive(message)
        self._derived += 1
        key = id(message)
        values, refs = self._values, self._refs

        def forget(ref: weakref.ref[Message], key: int = key) -> None:
            if refs.get(key) is ref:  # (pop: a callback may run on any thread)
                refs.pop(key, None)
                values.pop(key, None)

        refs[key] = weakref.ref(message, forget)
        values[key] = value
        return value

    def stats(self) -> MemoStats:
        """Counters since creation (the seam tests count derivations through)."""
        return MemoStats(self._derived, self._reused, len(self._values))
