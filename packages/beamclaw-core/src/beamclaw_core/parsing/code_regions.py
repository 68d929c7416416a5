"""Markdown code regions: the spans that text filters must leave untouched.

A code region is a fenced block (```` ``` ```` or ``~~~``, from the fence line to the
matching closing fence or the end of the text when unclosed) or an inline code span
(backtick-delimited, on one line). Offsets are half-open ``[start, end)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCED = re.compile(r"(^|\n)[ \t]*(```+|~~~+)[^\n]*\n[\s\S]*?(?:\n[ \t]*\2[ \t]*(?=\n|$)|$)")
_INLINE = re.compile(r"(`+)(?!`)[^\n]*?(?<!`)\1(?!`)")


@dataclass(frozen=True, slots=True)
class CodeRegion:
    """A half-open character range ``[start, end)`` holding code."""

    start: int
    end: int


def find_code_regions(text: str) -> tuple[CodeRegion, ...]:
    """Every fenced block and inline code span in ``text``, sorted by start."""
    regions: list[CodeRegion] = []
    for m in _FENCED.finditer(text):
        start = m.start() + len(m.group(1))
        regions.append(CodeRegion(start, m.end()))
    for m in _INLINE.finditer(text):
        if not any(r.start <= m.start() < r.end for r in regions):
            regions.append(CodeRegion(m.start(), m.end()))
    return tuple(sorted(regions, key=lambda r: r.start))


def inside_code(position: int, regions: tuple[CodeRegion, ...]) -> bool:
    """True when ``position`` falls inside one of ``regions``."""
    return any(r.start <= position < r.end for r in regions)
