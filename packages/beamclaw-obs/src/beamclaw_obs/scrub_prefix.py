"""Prefix automata: where, in a growing text, a match of a regex could still be in progress.

:class:`PrefixAutomaton` is a Thompson NFA built from a pattern's parse tree.
:class:`PrefixAutomata` runs several of them as one: fed one character at a time
(:meth:`PrefixAutomata.advance`), it tracks every way a match of any of them could have
started and still be alive — :data:`Threads`, in order of their earliest start, so the
first start is the hold point: the text before it can never become part of a match,
whatever comes next. How a sequence of live states moves on a character is computed once
and remembered (a stream of prose walks the same few sequences over the same characters
again and again); per character, only the starts are carried along.

Invariant: the automaton's language is a *superset* of the pattern's, so the hold point
is never later than a real partial match would give (sound, maybe early). Zero-width
assertions (``\\b``, look-ahead, look-behind) are taken as always true, and counted
repeats above :data:`_CAP` become "at least ``min(n, _CAP)``, then any number".
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

_CAP = 100
"""Counted repeats up to this bound are unrolled exactly; larger ones are widened."""

_MEMO = 65536
"""Characters whose start states are remembered (per automaton; a bound for any text)."""
_PLANS = 32768
"""State sequences × characters whose moves :class:`PrefixAutomata` remembers."""

Thread = tuple[int, int]
"""``(automaton, state)``; state -1 is a match of that automaton just completed."""


class ThreadList:
    """Live threads in order (each once), hashed once: the key of the move memo."""

    __slots__ = ("_hash", "threads")

    def __init__(self, threads: tuple[Thread, ...]) -> None:
        self.threads = threads
        self._hash = hash(threads)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, ThreadList) and self.threads == other.threads)

    def __bool__(self) -> bool:
        return bool(self.threads)


Threads = tuple[ThreadList, tuple[int, ...]]
"""Live threads and where each one's earliest match began, in non-decreasing order of
start: the first start is where the text must be held from."""
NO_THREADS: Threads = (ThreadList(()), ())

CharTest = Callable[[str], bool]


def _any(_: str) -> bool:
    return True


def _category(name: str) -> CharTest:
    tests: dict[str, CharTest] = {
        "CATEGORY_DIGIT": str.isdigit,
        "CATEGORY_NOT_DIGIT": lambda c: not c.isdigit(),
        "CATEGORY_SPACE": str.isspace,
        "CATEGORY_NOT_SPACE": lambda c: not c.isspace(),
        "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
        "CATEGORY_NOT_WORD": lambda c: not (c.isalnum() or c == "_"),
    }
    return tests.get(name, _any)  # an unknown category: any character (a superset)


def _class(items: Iterable[Any]) -> CharTest:
    chars: set[str] = set()
    ranges: list[tuple[int, int]] = []
    tests: list[CharTest] = []
    negate = False
    for op, av in items:
        kind = str(op)
        if kind == "NEGATE":
            negate = True
        elif kind == "LITERAL":
            chars.add(chr(av))
        elif kind == "RANGE":
            ranges.append((av[0], av[1]))
        elif kind == "CATEGORY":
            tests.append(_category(str(av)))
        else:
            return _any

    def test(c: str) -> bool:
        o = ord(c)
        hit = c in chars or any(lo <= o <= hi for lo, hi in ranges) or any(t(c) for t in tests)
        return hit != negate

    return test


def _folding(test: CharTest) -> CharTest:
    return lambda c: test(c) or test(c.lower()) or test(c.upper())


@dataclass
class _Nfa:
    moves: list[list[tuple[CharTest, int]]] = field(default_factory=list)
    eps: list[list[int]] = field(default_factory=list)

    def state(self) -> int:
        self.moves.append([])
        self.eps.append([])
        return len(self.moves) - 1

    def step(self, at: int, test: CharTest, fold: bool) -> int:
        to = self.state()
        self.moves[at].append((_folding(test) if fold else test, to))
        return to

    def seq(self, items: Iterable[Any], at: int, fold: bool) -> int:
        for op, av in items:
            at = self.item(str(op), av, at, fold)
        return at

    def item(self, kind: str, av: Any, at: int, fold: bool) -> int:
        if kind == "LITERAL":
            return self.step(at, chr(av).__eq__, fold)
        if kind == "NOT_LITERAL":
            return self.step(at, chr(av).__ne__, fold)
        if kind == "ANY":
            return self.step(at, _any, False)
        if kind == "IN":
            return self.step(at, _class(av), fold)
        if kind in {"AT", "ASSERT", "ASSERT_NOT"}:
            return at  # zero-width: taken as true (a superset)
        if kind == "SUBPATTERN":
            add_flags = av[1]
            del_flags = av[2]
            inner = (fold or bool(add_flags & re.IGNORECASE)) and not del_flags & re.IGNORECASE
            return self.seq(av[-1], at, inner)
        if kind == "ATOMIC_GROUP":
            return self.seq(av, at, fold)
        if kind == "BRANCH":
            end = self.state()
            for alternative in av[1]:
                start = self.state()
                self.eps[at].append(start)
                self.eps[self.seq(alternative, start, fold)].append(end)
            return end
        if kind in {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}:
            return self.repeat(av, at, fold)
        return self.anything(at)  # back-references and the like: any text (a superset)

    def repeat(self, av: Any, at: int, fold: bool) -> int:
        low, high, body = av[0], av[1], av[2]
        for _ in range(min(low, _CAP)):
            at = self.seq(body, at, fold)
        if low > _CAP or high > _CAP:  # MAXREPEAT included: then any number more
            loop = self.state()
            self.eps[at].append(loop)
            self.eps[self.seq(body, loop, fold)].append(loop)
            return loop
        end = self.state()
        for _ in range(high - low):
            self.eps[at].append(end)
            at = self.seq(body, at, fold)
        self.eps[at].append(end)
        return end

    def anything(self, at: int) -> int:
        loop = self.state()
        self.eps[at].append(loop)
        self.moves[loop].append((_any, loop))
        return loop


class PrefixAutomaton:
    """One pattern's automaton (immutable, shared); the live threads are the caller's.

    ``admit(text, at)`` may veto a match starting at ``at`` (``text`` is everything fed
    so far): the key/value rule starts only after a key.
    """

    def __init__(
        self, pattern: re.Pattern[str], admit: Callable[[str, int], bool] | None = None
    ) -> None:
        nfa = _Nfa()
        start = nfa.state()
        try:
            parser: Any = importlib.import_module("re._parser")
            parsed = parser.parse(pattern.pattern, pattern.flags)
            nfa.seq(parsed.data, start, bool(parsed.state.flags & re.IGNORECASE))
        except Exception:  # unparsable here: any text could be a match (a superset)
            nfa = _Nfa()
            nfa.anything(nfa.state())
        self._moves = nfa.moves
        self._eps = nfa.eps
        self._next: dict[int, tuple[int, ...]] = {}
        self._start = self._closed(start)
        self._first: dict[str, tuple[int, ...]] = {}
        self._steps: dict[tuple[int, str], tuple[int, ...]] = {}
        self._admit = admit

    def _closed(self, state: int) -> tuple[int, ...]:
        """The states with moves reachable from ``state`` without input; (-1,) when only
        the end of a match is."""
        found = self._next.get(state)
        if found is None:
            closure = _close(self._eps, state)
            found = tuple(s for s in closure if self._moves[s]) or (-1,)
            self._next[state] = found
        return found

    @property
    def admit(self) -> Callable[[str, int], bool] | None:
        """The veto on where a match may start (None: anywhere)."""
        return self._admit

    def can_start(self, c: str) -> bool:
        """Whether a match may begin with ``c`` (else, with no live thread, nothing to do)."""
        return bool(self._starts(c))

    def _starts(self, c: str) -> tuple[int, ...]:
        """The states a match beginning with ``c`` is in after it (memoised per character)."""
        found = self._first.get(c)
        if found is None:
            states = {
                n
                for s in self._start
                if s >= 0
                for t, to in self._moves[s]
                if t(c)
                for n in self._closed(to)
            }
            found = tuple(sorted(states))
            if len(self._first) < _MEMO:
                self._first[c] = found
        return found

    def _step(self, state: int, c: str) -> tuple[int, ...]:
        """The states ``state`` is in after ``c`` (memoised per state and character: a
        stream steps the same few states over the same characters again and again)."""
        key = (state, c)
        found = self._steps.get(key)
        if found is None:
            found = tuple(
                dict.fromkeys(
                    s for test, to in self._moves[state] if test(c) for s in self._closed(to)
                )
            )
            if len(self._steps) < _MEMO:
                self._steps[key] = found
        return found

    def starts(self, c: str) -> tuple[int, ...]:
        """The states a match beginning with ``c`` is in after it."""
        return self._starts(c)

    def step(self, state: int, c: str) -> tuple[int, ...]:
        """The states ``state`` moves to on ``c``."""
        return self._step(state, c)


_Plan = tuple[ThreadList, tuple[int, ...]]
"""The threads after a character, and for each the index of the thread it came from
(one past the last: a match beginning at that character)."""
_Group = tuple[Callable[[str, int], bool], frozenset[int]]
"""One ``admit`` veto and the automata (able to start on a character) it rules."""


class PrefixAutomata:
    """Automata run together over one text (shared, immutable but for its memos)."""

    def __init__(self, automata: Iterable[PrefixAutomaton]) -> None:
        self._automata = tuple(automata)
        self._starters: dict[str, tuple[tuple[int, ...], tuple[_Group, ...]]] = {}
        self._plans: dict[tuple[ThreadList, str, frozenset[int]], _Plan] = {}
        self._interned: dict[tuple[Thread, ...], ThreadList] = {}

    @property
    def remembered(self) -> int:
        """How many moves (state sequence × character) are remembered."""
        return len(self._plans)

    def _starters_of(self, c: str) -> tuple[tuple[int, ...], tuple[_Group, ...]]:
        """The automata a match of which may begin with ``c``, and their vetoes grouped
        by function (memoised per character)."""
        found = self._starters.get(c)
        if found is None:
            able = tuple(i for i, a in enumerate(self._automata) if a.can_start(c))
            groups: dict[Callable[[str, int], bool], set[int]] = {}
            for i in able:
                admit = self._automata[i].admit
                if admit is not None:
                    groups.setdefault(admit, set()).add(i)
            found = (able, tuple((f, frozenset(m)) for f, m in groups.items()))
            if len(self._starters) < _MEMO:
                self._starters[c] = found
        return found

    def advance(self, threads: Threads, whole: str, at: int) -> Threads:
        """The threads alive after ``whole[at]`` given those alive before it. A state
        reached from several threads keeps the earliest start (the first in order)."""
        c = whole[at]
        able, groups = self._starters_of(c)
        live, starts = threads
        if not live and not able:
            return threads
        vetoed: frozenset[int] = frozenset()
        for admit, members in groups:
            if not admit(whole, at):
                vetoed |= members
        key = (live, c, vetoed)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(live, c, able, vetoed)
            if len(self._plans) < _PLANS:
                self._plans[key] = plan
        moved, sources = plan
        return moved, tuple(map((*starts, at).__getitem__, sources))

    def _plan(
        self, live: ThreadList, c: str, able: tuple[int, ...], vetoed: frozenset[int]
    ) -> _Plan:
        automata = self._automata
        moved: dict[Thread, int] = {}
        for k, (i, state) in enumerate(live.threads):
            if state < 0:
                continue
            for s in automata[i].step(state, c):
                moved.setdefault((i, s), k)  # the earlier thread started first
        fresh = len(live.threads)  # the index of this character's own start
        for i in able:
            if i not in vetoed:
                for s in automata[i].starts(c):
                    moved.setdefault((i, s), fresh)
        threads = tuple(moved)
        sequence = self._interned.get(threads)
        if sequence is None:
            sequence = ThreadList(threads)
            if len(self._interned) < _PLANS:
                self._interned[threads] = sequence
        return sequence, tuple(moved.values())


def _close(eps: list[list[int]], state: int) -> tuple[int, ...]:
    seen = {state}
    todo = [state]
    while todo:
        for nxt in eps[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return tuple(sorted(seen))
