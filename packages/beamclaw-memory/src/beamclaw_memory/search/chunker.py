"""Word-boundary chunking with overlap, and markdown section splitting.

Invariants of :func:`chunk_text`:

* Every chunk is at most ``size`` characters; the text inside a chunk is left untouched.
* Cuts fall on whitespace, preferring a paragraph break, then a line break, then any
  space, within the last third of the window; a run with no whitespace at all (a URL, a
  CJK paragraph) is cut hard at ``size``.
* Consecutive chunks share roughly ``overlap`` characters, starting on a word boundary.
* The same text always yields the same chunks (indexing is incremental by content hash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _cut_point(text: str, start: int, end: int, size: int) -> int:
    """The best boundary in ``text[start:end]`` to end a chunk at (exclusive index)."""
    floor = start + max(1, (size * 2) // 3)
    for sep in ("\n\n", "\n", " ", "\t"):
        pos = text.rfind(sep, floor, end)
        if pos > start:
            return pos
    for pos in range(end - 1, start, -1):
        if text[pos].isspace():
            return pos
    return end


def _overlap_start(text: str, cut: int, start: int, overlap: int) -> int:
    """Where the next chunk starts: about ``overlap`` chars before ``cut``, on a word."""
    if overlap <= 0:
        pos = cut
    else:
        pos = max(start + 1, cut - overlap)
        if pos < cut and not text[pos - 1].isspace():
            space = text.find(" ", pos, cut)
            newline = text.find("\n", pos, cut)
            candidates = [p for p in (space, newline) if p != -1]
            # no whitespace in the overlap window (CJK, a long URL): overlap by characters
            pos = min(candidates) + 1 if candidates else max(start + 1, cut - overlap)
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def chunk_text(text: str, size: int, overlap: int = 0) -> list[str]:
    """Split ``text`` into overlapping chunks of at most ``size`` characters.

    Args:
        text: any text; leading/trailing whitespace of chunks is stripped and empty
            chunks are dropped.
        size: the maximum chunk length in characters (>= 16).
        overlap: characters shared by consecutive chunks (``0 <= overlap < size // 2``
            is enforced by clamping).
    """
    size = max(16, size)
    overlap = max(0, min(overlap, size // 2 - 1))
    text = text.strip()
    if not text:
        return []
    if len(text) <= size:
        return [text]
    chunks: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        cut = end if end == len(text) else _cut_point(text, start, end, size)
        piece = text[start:cut].strip()
        if piece:
            chunks.append(piece)
        if cut >= len(text):
            break
        nxt = _overlap_start(text, cut, start, overlap)
        start = nxt if nxt > start else cut
    return chunks


@dataclass(frozen=True, slots=True)
class Section:
    """A markdown section: its heading path (``"Work > Projects"``) and its text."""

    heading: str
    text: str


def split_sections(markdown: str) -> list[Section]:
    """Split markdown at ATX headings (outside code fences) into sections.

    The text before the first heading is a section with an empty heading. Each section's
    text includes its heading line, so a chunk keeps the context it came from.
    """
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current: list[str] = []
    heading = ""
    in_fence = False

    def flush() -> None:
        body = "\n".join(current).strip()
        if body:
            sections.append(Section(heading=heading, text=body))

    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match:
            flush()
            level, title = len(match.group(1)), match.group(2)
            path = [(lvl, t) for lvl, t in path if lvl < level]
            path.append((level, title))
            heading = " > ".join(t for _, t in path)
            current = [line]
        else:
            current.append(line)
    flush()
    return sections


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs, stripped, empties dropped."""
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
