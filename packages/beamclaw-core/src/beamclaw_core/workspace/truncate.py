"""Per-file truncation of workspace text before it enters the system prompt.

A bootstrap file or daily log larger than the limit (20 KB by default) keeps its head
and its tail — the top holds a file's structure, the bottom its newest entries, since
memory files grow by appending — with a marker between them saying how much was left
out and how to read the rest.

Invariants: text within the limit is returned unchanged; otherwise the kept text (head
plus tail, marker excluded) is at most ``limit_bytes`` UTF-8 bytes, never splits a
character, and the marker always contains :data:`TRUNCATION_MARKER`.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_FILE_BYTES = 20 * 1024
"""Default per-file limit: 20 KB (20,480 bytes of UTF-8)."""

TRUNCATION_MARKER = "[truncated:"
"""Every truncation marker starts with this text."""

_HEAD_SHARE = 0.75  # of the budget; the tail gets the rest
_SNAP_WINDOW = 0.2  # cut at a line break when one lies this close to the cut point


@dataclass(frozen=True, slots=True)
class Truncated:
    """The text to put in the prompt and whether anything was cut."""

    text: str
    truncated: bool
    original_bytes: int
    kept_bytes: int


def truncate_for_prompt(text: str, *, label: str, limit_bytes: int = MAX_FILE_BYTES) -> Truncated:
    """Cut ``text`` to ``limit_bytes`` of UTF-8, keeping head and tail around a marker.

    Args:
        text: the file's content.
        label: how the marker names the file (``MEMORY.md``).
        limit_bytes: the most bytes of ``text`` to keep (positive).
    """
    if limit_bytes <= 0:
        raise ValueError("limit_bytes must be positive")
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return Truncated(text, False, len(data), len(data))
    head_budget = int(limit_bytes * _HEAD_SHARE)
    tail_budget = limit_bytes - head_budget
    head = data[:head_budget].decode("utf-8", errors="ignore")
    tail = data[len(data) - tail_budget :].decode("utf-8", errors="ignore")
    head = _snap_head(head)
    tail = _snap_tail(tail)
    kept = len(head.encode("utf-8")) + len(tail.encode("utf-8"))
    omitted = len(data) - kept
    marker = (
        f"\n\n{TRUNCATION_MARKER} {label} is {len(data):,} bytes; {omitted:,} bytes from the "
        f"middle are not shown. Read the whole file with the workspace memory tool, and keep "
        f"it under {limit_bytes // 1024} KB.]\n\n"
    )
    return Truncated(head.rstrip("\n") + marker + tail.lstrip("\n"), True, len(data), kept)


def _snap_head(head: str) -> str:
    cut = head.rfind("\n")
    if cut >= 0 and cut >= len(head) * (1 - _SNAP_WINDOW):
        return head[: cut + 1]
    return head


def _snap_tail(tail: str) -> str:
    cut = tail.find("\n")
    if 0 <= cut <= len(tail) * _SNAP_WINDOW:
        return tail[cut + 1 :]
    return tail
