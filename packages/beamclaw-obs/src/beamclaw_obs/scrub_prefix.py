"""Prefix automata: where, in a growing text, a match of a regex could still be in progress.

:class:`PrefixAutomaton` is a Thompson NFA built from a pattern's parse tree. Fed one
character at a time, it tracks every way a match could have started and still be alive;
:meth:`PrefixAutomaton.hold_from` is the earliest start among them: the text before it
can never become part of a match of that pattern, whatever comes next.

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

    def advance(self, live: dict[int, int], whole: str, at: int) -> dict[int, int]:
        """The threads alive after ``whole[at]`` given those alive before it.

        A thread is ``state -> earliest start``; state -1 is a match just completed.
        """
        c = whole[at]
        out: dict[int, int] = {}
        for state, origin in live.items():
            if state < 0:
                continue
            for s in self._step(state, c):
                if out.get(s, at + 1) > origin:
                    out[s] = origin
        starts = self._starts(c)
        if starts and (self._admit is None or self._admit(whole, at)):
            for s in starts:
                if s not in out:
                    out[s] = at
        return out


def _close(eps: list[list[int]], state: int) -> tuple[int, ...]:
    seen = {state}
    todo = [state]
    while todo:
        for nxt in eps[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return tuple(sorted(seen))
