"""Offset pagination behind opaque cursors, as the fakes hand them out."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def page(
    items: list[T], size: Any, cursor: Any, *, default: int = 100
) -> tuple[list[T], str | None]:
    """``(items of this page, next cursor or None)``; a bad cursor starts at 0."""
    try:
        count = max(1, int(size)) if size is not None else default
    except (TypeError, ValueError):
        count = default
    offset = 0
    if isinstance(cursor, str) and cursor.startswith("cur-"):
        try:
            offset = int(cursor.removeprefix("cur-"))
        except ValueError:
            offset = 0
    chunk = items[offset : offset + count]
    more = offset + count < len(items)
    return chunk, f"cur-{offset + count}" if more else None
