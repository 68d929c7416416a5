"""Whole-request forms of successive requests, extended instead of recomputed.

A conversation's successive LLM requests share nearly all their messages: the history
grows at its end, and only the few messages in front of it (the system prompt, a
summary) are rebuilt per request. A :class:`RequestFold` remembers the last ``keep``
request histories it saw (*runs*), each with a cumulative form per message -- a running
token total, or the messages' encodings joined in one buffer with their end offsets --
and answers a request that continues a run from that run: only the messages in front of
the shared stretch (the *head*) and after it (the *tail*) go through the per-message
:class:`~beamclaw_core.providers.memo.MessageMemo`; the stretch is one subtraction or
one slice of the buffer.

Matching: the request's messages are scanned from the end (at most ``scan``) for a
run's last message (by identity, a dict lookup each); in front of it, the first position
(at most ``scan`` in) where run and request hold the same message starts the stretch,
and one list comparison proves the whole stretch holds the same messages (identity,
else equality: derivation is pure, so equal messages have equal forms).

Invariants:

* The result equals the one computed from every message, byte for byte: nothing is
  reused that the comparison did not prove.
* Per request, Python-level work is O(head + tail); the stretch costs C-level pointer
  comparisons and one copy of its bytes, never a step per message.
* A run starts as a whole request, then grows only by tails (a later request's head
  never joins it). At most ``keep`` runs are kept, the least recently used dropped
  first; a run holds its messages alive until then. A run is put back only once it has
  grown: a derivation that raises leaves it dropped, never half-grown.
* Thread-safe: a lock guards the runs (uncontended on an event loop's thread).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate, islice, repeat
from operator import add
from typing import Generic, TypeVar

import orjson

from beamclaw_core.messages import Message
from beamclaw_core.providers.memo import MessageMemo

T = TypeVar("T")

KEEP = 32
"""Runs remembered: conversations whose requests interleave without recomputing (a
request continuing none costs what computing it whole did, plus building its run)."""
SCAN = 256
"""The most new messages after, or rebuilt messages in front of, a continued run."""


@dataclass(frozen=True, slots=True)
class FoldStats:
    """``reused``: messages served from a run's stretch; ``mapped``: messages that went
    through the per-message memo (heads, tails and requests continuing no run)."""

    reused: int
    mapped: int
    runs: int


@dataclass(eq=False, slots=True)
class Run:
    """One request history remembered (a fold needing more per-run state subclasses
    this and overrides :meth:`RequestFold._new_run`)."""

    messages: list[Message]
    """Append-only; ``messages[start:]`` is the part a next request may continue."""
    ends: array[int] = field(default_factory=lambda: array("q"))
    """``ends[i]``: the cumulative form after ``messages[i]`` (a total, or an offset)."""
    start: int = 0
    data: bytearray = field(default_factory=bytearray)
    """The joined encodings (byte folds only)."""


def _listed(messages: Sequence[Message]) -> list[Message]:
    return messages if isinstance(messages, list) else list(messages)


class RequestFold(ABC, Generic[T]):
    """A fold of ``memo``'s per-message values over whole requests; see the module
    docstring. Subclasses say how a run grows and how a request's result is assembled."""

    def __init__(self, memo: MessageMemo[T], *, keep: int = KEEP, scan: int = SCAN) -> None:
        self._memo = memo
        self._keep = keep
        self._scan = scan
        self._runs: dict[int, Run] = {}
        """``id`` of a run's last message -> run, least recently used first."""
        self._lock = threading.Lock()
        self._reused = 0
        self._mapped = 0

    def stats(self) -> FoldStats:
        """Counters since creation (the seam tests count per-request work through)."""
        return FoldStats(self._reused, self._mapped, len(self._runs))

    def _new_run(self) -> Run:
        return Run([])

    @abstractmethod
    def _grow(self, run: Run, values: list[T]) -> None:
        """Append the cumulative forms of ``values`` (the run's new messages) to ``run``."""

    def _fold(self, messages: list[Message]) -> tuple[list[T], Run]:
        """``(head values, run)``: the request is its head, then ``run.messages[run.start:]``
        (grown by the request's tail). Call with the lock held."""
        found = self._continued(messages)
        if found is None:
            run, head, tail = self._new_run(), [], messages
        else:
            run, run.start, at = found
            del self._runs[id(run.messages[-1])]
            stop = at + len(run.messages) - run.start
            head, tail = messages[:at], messages[stop:]
            self._reused += stop - at
        self._mapped += len(head) + len(tail)
        if tail:
            run.messages.extend(tail)
            self._grow(run, self._memo.many(tail))
        self._remember(run)
        return self._memo.many(head) if head else [], run

    def _continued(self, messages: list[Message]) -> tuple[Run, int, int] | None:
        """``(run, start, at)``: ``messages[at:at + n - start] == run.messages[start:]``
        (``n`` the run's length) for the run ending latest in ``messages``, or None."""
        runs, total = self._runs, len(messages)
        for last in range(total - 1, max(-1, total - 1 - self._scan), -1):
            run = runs.get(id(messages[last]))
            if run is None:
                continue
            have = run.messages
            shift = last - (len(have) - 1)
            i = max(run.start, -shift)
            limit = min(len(have), i + self._scan)
            while i < limit and messages[i + shift] is not have[i]:
                i += 1
            if i < limit and messages[i + shift : last + 1] == have[i:]:
                return run, i, i + shift
            return None
        return None

    def _remember(self, run: Run) -> None:
        self._runs[id(run.messages[-1])] = run  # (a run is never empty)
        while len(self._runs) > self._keep:
            del self._runs[next(iter(self._runs))]


class TokenTotals(RequestFold[int]):
    """The total of a per-message token estimate over a request."""

    def _grow(self, run: Run, values: list[int]) -> None:
        ends = run.ends
        ends.extend(islice(accumulate(values, initial=ends[-1] if ends else 0), 1, None))

    def total(self, messages: Sequence[Message]) -> int:
        """``sum(memo(m) for m in messages)``."""
        if not messages:
            return 0
        with self._lock:
            head, run = self._fold(_listed(messages))
            ends, start = run.ends, run.start
            return sum(head) + ends[-1] - (ends[start - 1] if start else 0)


class JoinedEncodings(RequestFold[bytes]):
    """A request's messages as one encoded JSON array, from per-message encodings."""

    def _grow(self, run: Run, values: list[bytes]) -> None:
        data, ends = run.data, run.ends
        if not values:
            return
        if ends:
            data += b","
        # value k ends at (where the first starts) - 1 + the sum of (length + 1) up to k
        sizes = map(add, map(len, values), repeat(1))
        ends.extend(islice(accumulate(sizes, initial=len(data) - 1), 1, None))
        data += b",".join(values)

    def array(self, messages: Sequence[Message]) -> orjson.Fragment:
        """``b"[" + b",".join(memo(m) for m in messages) + b"]"``, as a fragment
        ``orjson.dumps`` embeds verbatim."""
        if not messages:
            return orjson.Fragment(b"[]")
        with self._lock:
            head, run = self._fold(_listed(messages))
            offset = run.ends[run.start - 1] + 1 if run.start else 0
            with memoryview(run.data) as view, view[offset:] as stretch:
                return orjson.Fragment(
                    b"".join((b"[", *(value + b"," for value in head), stretch, b"]"))
                )
