"""Output caps with an explicit truncation marker.

Invariant: ``truncate(text, limit)`` returns ``text`` unchanged when it fits, otherwise a
string that ends (or, with ``keep_tail``, contains in the middle) a marker naming how many
characters were omitted, so the model always knows it did not see everything.
"""

from __future__ import annotations

TRUNCATION_MARKER = "[... truncated: {omitted} of {total} characters omitted ...]"


def truncation_marker(omitted: int, total: int) -> str:
    """The marker text inserted where output was cut."""
    return TRUNCATION_MARKER.format(omitted=omitted, total=total)


def truncate(text: str, limit: int, *, keep_tail: bool = False) -> str:
    """Cap ``text`` at about ``limit`` characters (plus the marker).

    Args:
        text: the full output.
        limit: characters of original text kept (at least 1).
        keep_tail: keep the last third as well as the head (useful for command output,
            where errors come last).
    """
    limit = max(1, limit)
    total = len(text)
    if total <= limit:
        return text
    omitted = total - limit
    marker = truncation_marker(omitted, total)
    if not keep_tail:
        return f"{text[:limit]}\n{marker}"
    tail = limit // 3
    head = limit - tail
    return f"{text[:head]}\n{marker}\n{text[total - tail :]}"
