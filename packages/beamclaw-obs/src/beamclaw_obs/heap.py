"""Handing freed heap memory back to the operating system.

CPython returns a freed object's memory to its allocator: pymalloc's pools for small
objects, the C heap (``malloc``) for larger ones (dict tables, lists, byte strings over
512 bytes). glibc keeps freed C-heap memory for reuse and gives the system back only the
top of its heap, so after a burst of frees (idle sessions leaving memory) the process's
RSS stays at its high-water mark. ``malloc_trim(0)`` returns every whole free page.

Invariant: :func:`release_free_memory` never raises; where the C library has no
``malloc_trim`` (musl, macOS) it does nothing and says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

_trim: list[Callable[[int], int] | None] = []


def _malloc_trim() -> Callable[[int], int] | None:
    if not _trim:
        found: Callable[[int], int] | None = None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            found = libc.malloc_trim
        except (OSError, AttributeError):
            found = None
        _trim.append(found)
    return _trim[0]


def release_free_memory() -> bool:
    """Return the C heap's free pages to the system; False where that is not possible."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
