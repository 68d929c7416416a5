"""Unicode-aware tokenisation for keyword search.

Invariants:

* Text is NFKC-normalised and case-folded first, so ``Ｃａｆé``, ``CAFÉ`` and ``café``
  (composed or decomposed) give the same token; diacritics on Latin letters are then
  removed (``crème brûlée`` matches ``creme brulee``, as SQLite's ``unicode61`` does).
  Other scripts keep their marks (``й`` stays distinct from ``и``).
* A word is a run of letters, digits and combining marks in any script: accented Latin,
  Cyrillic, Greek, Arabic, Hebrew and Indic words are never split inside.
* Scripts written without spaces (Han, Hiragana, Katakana, Hangul) are indexed as
  overlapping character bigrams (a lone character is its own token), so ``東京都`` matches
  a query for ``東京``.
* Stopwords and one-letter tokens of alphabetic scripts are dropped; digits are kept.
* The stopword lists are bm25s's, read when a :class:`Tokenizer` first tokenises (bm25s
  imports numpy): importing this module or building a :class:`Tokenizer` loads neither.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cached_property, lru_cache

# Combining marks that ``\w`` does not match but that live inside words.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0900-\u0dff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
_WORD = re.compile(rf"(?:[^\W_]|[{_MARKS}])+")
_CJK_CHARS = (
    "\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3131-\u318e\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
)
_CJK_RUN = re.compile(rf"[{_CJK_CHARS}]+")

_STOPWORD_LISTS: dict[str, str] = {
    "en": "STOPWORDS_EN_PLUS",
    "de": "STOPWORDS_GERMAN",
    "nl": "STOPWORDS_DUTCH",
    "fr": "STOPWORDS_FRENCH",
    "es": "STOPWORDS_SPANISH",
    "pt": "STOPWORDS_PORTUGUESE",
    "it": "STOPWORDS_ITALIAN",
    "ru": "STOPWORDS_RUSSIAN",
    "sv": "STOPWORDS_SWEDISH",
}
"""Language code → the name of its list in ``bm25s.stopwords``."""
STOPWORD_LANGUAGES = tuple(sorted(_STOPWORD_LISTS))
"""Language codes accepted by :func:`stopwords_for`."""


@lru_cache(maxsize=32)
def stopwords_for(languages: tuple[str, ...]) -> frozenset[str]:
    """The union of the stopword lists of ``languages`` (unknown codes are ignored)."""
    from bm25s import stopwords as lists  # bm25s (and numpy) load with the first tokenising

    words: set[str] = set()
    for lang in languages:
        name = _STOPWORD_LISTS.get(lang)
        listed: tuple[str, ...] = getattr(lists, name) if name is not None else ()
        for word in listed:
            folded = unicodedata.normalize("NFKC", word).casefold()
            words.add(folded)
            words.add(fold_latin(folded))
    return frozenset(words)


def normalise(text: str) -> str:
    """NFKC-normalised, case-folded text."""
    return unicodedata.normalize("NFKC", text).casefold()


def fold_latin(word: str) -> str:
    """``word`` without the combining marks that sit on Latin base letters."""
    if word.isascii():
        return word
    out: list[str] = []
    base_is_latin = False
    for ch in unicodedata.normalize("NFD", word):
        if unicodedata.combining(ch):
            if base_is_latin:
                continue
        else:
            base_is_latin = ord(ch) < 0x250
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _split_cjk(word: str) -> Iterable[tuple[str, bool]]:
    """Yield ``(piece, is_cjk)`` parts of a word that may mix scripts (``iphone手机``)."""
    pos = 0
    for match in _CJK_RUN.finditer(word):
        if match.start() > pos:
            yield word[pos : match.start()], False
        yield match.group(), True
        pos = match.end()
    if pos < len(word):
        yield word[pos:], False


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """Split ``text`` into search tokens (see the module invariants)."""
    normal = normalise(text)
    if normal.isascii():  # no CJK run, no mark to fold: the words are the tokens
        return [
            w for w in _WORD.findall(normal) if w not in stopwords and (len(w) > 1 or w.isdigit())
        ]
    tokens: list[str] = []
    for word in _WORD.findall(normal):
        for piece, is_cjk in _split_cjk(word):
            if is_cjk:
                if len(piece) == 1:
                    tokens.append(piece)
                else:
                    tokens.extend(piece[i : i + 2] for i in range(len(piece) - 1))
            elif piece in stopwords:
                continue
            elif len(piece) > 1 or piece.isdigit():
                tokens.append(fold_latin(piece))
    return tokens


class Tokenizer:
    """A configured tokeniser: :func:`tokenize` with a fixed stopword set."""

    def __init__(self, stopword_languages: Iterable[str] = ("en",)) -> None:
        self.languages = tuple(sorted(set(stopword_languages)))

    @cached_property
    def stopwords(self) -> frozenset[str]:
        """:func:`stopwords_for` the languages, read at the first use."""
        return stopwords_for(self.languages)

    def __call__(self, text: str) -> list[str]:
        return tokenize(text, self.stopwords)
