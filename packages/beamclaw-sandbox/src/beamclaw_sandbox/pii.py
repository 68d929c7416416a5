"""PII tokenisation at the sandbox's boundaries (pure).

Values that look personal or secret (emails, API keys, card numbers, phone numbers and
configured patterns) are replaced by tokens such as ``PII_EMAIL_3`` before they enter a
container, and put back only where the rules below allow:

* the script (written by the model) is tokenised; its values are *known* to the session;
* a tool result sent into the container through the bridge is tokenised; values first
  seen there are *not* known to the session (the model never saw them);
* arguments of a bridge call are de-tokenised in full (the tool needs the real values);
* the script's output, going back to the model, is de-tokenised only for known values,
  so PII that flowed from one tool to another through a script stays out of the model's
  context.

Invariants: one value gets one token for the life of the session's tokenizer (stable);
a token the tokenizer never issued is left as it is; ``detokenize(tokenize(t))`` is ``t``
for known values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast


@dataclass(frozen=True)
class PiiPattern:
    kind: str
    regex: re.Pattern[str]
    luhn: bool = False


def _luhn_ok(text: str) -> bool:
    digits = [int(c) for c in text if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, digit in enumerate(reversed(digits)):
        if index % 2 == 1:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


BUILTIN_PATTERNS: tuple[PiiPattern, ...] = (
    PiiPattern(
        "KEY",
        re.compile(
            r"\b(?:sk-(?:ant-|or-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})"
        ),
    ),
    PiiPattern(
        "EMAIL",
        re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
    ),
    PiiPattern("CARD", re.compile(r"\b\d(?:[ -]?\d){12,18}\b"), luhn=True),
    PiiPattern("PHONE", re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}\d\b")),
)
"""Conservative on purpose: a phone number needs its ``+`` country code, a card number
must pass the Luhn check, so ordinary numbers in code are left alone."""

TOKEN = re.compile(r"\bPII_([A-Z0-9]+)_(\d+)\b")


def custom_patterns(patterns: Mapping[str, str]) -> tuple[PiiPattern, ...]:
    """``[sandbox] pii_patterns`` (kind → regex) as patterns."""
    return tuple(PiiPattern(kind.upper(), re.compile(regex)) for kind, regex in patterns.items())


class PiiTokenizer:
    """The tokens of one session."""

    def __init__(self, patterns: Iterable[PiiPattern] = BUILTIN_PATTERNS) -> None:
        self._patterns = tuple(patterns)
        self._by_value: dict[str, str] = {}
        self._by_token: dict[str, str] = {}
        self._known: set[str] = set()
        self._counter = 0

    def _token_for(self, kind: str, value: str, known: bool) -> str:
        token = self._by_value.get(value)
        if token is None:
            self._counter += 1
            token = f"PII_{kind}_{self._counter}"
            self._by_value[value] = token
            self._by_token[token] = value
        if known:
            self._known.add(token)
        return token

    def tokenize(self, text: str, *, known: bool) -> str:
        """Replace every PII value in ``text`` by its token; ``known``: the model saw it."""
        for pattern in self._patterns:

            def replace(match: re.Match[str], pattern: PiiPattern = pattern) -> str:
                value = match.group(0)
                if pattern.luhn and not _luhn_ok(value):
                    return value
                return self._token_for(pattern.kind, value, known)

            text = pattern.regex.sub(replace, text)
        return text

    def detokenize(self, text: str, *, only_known: bool) -> str:
        """Put values back for tokens this tokenizer issued (only known ones if asked)."""

        def replace(match: re.Match[str]) -> str:
            token = match.group(0)
            if only_known and token not in self._known:
                return token
            return self._by_token.get(token, token)

        return TOKEN.sub(replace, text)

    def detokenize_value(self, value: Any) -> Any:
        """:meth:`detokenize` (everything) over the strings of a JSON value."""
        if isinstance(value, str):
            return self.detokenize(value, only_known=False)
        if isinstance(value, list):
            return [self.detokenize_value(v) for v in cast(list[Any], value)]
        if isinstance(value, dict):
            items = cast(dict[Any, Any], value).items()
            return {k: self.detokenize_value(v) for k, v in items}
        return value

    @property
    def size(self) -> int:
        return len(self._by_token)


class PiiVault:
    """One :class:`PiiTokenizer` per session, dropped when the session ends."""

    def __init__(self, patterns: Iterable[PiiPattern] = BUILTIN_PATTERNS) -> None:
        self._patterns = tuple(patterns)
        self._sessions: dict[str, PiiTokenizer] = {}

    def for_session(self, session_id: str) -> PiiTokenizer:
        tokenizer = self._sessions.get(session_id)
        if tokenizer is None:
            tokenizer = self._sessions[session_id] = PiiTokenizer(self._patterns)
        return tokenizer

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
