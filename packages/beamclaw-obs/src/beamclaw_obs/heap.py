"""Handing freed heap memory back to the operating system.

CPython returns a freed object's memory to its allocator: pymalloc's pools for small
objects, the C heap (``malloc``) for larger ones (dict tables, lists, byte strings over
512 bytes). glibc keeps freed C-heap memory for reuse and gives the system back only the
top of its heap, so after a burst of frees (idle sessions leaving memory, a run of
turns) the process's RSS stays at its high-water mark. ``malloc_trim(0)`` returns every
whole free page. The gateway trims periodically (``beamclaw_gateway.heap_trim``).

Invariants: nothing here raises; where the C library has no ``malloc_trim`` (musl,
macOS) :func:`malloc_trim` is None. A trim holds the allocator's locks for 10-40 ms on a
fragmented heap of 150 MB: async callers run it on a thread, and rarely.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

_found: list[Callable[[], int] | None] = []


def malloc_trim() -> Callable[[], int] | None:
    """The C library's ``malloc_trim(0)`` as a call, or None when it has none."""
    if not _found:
        trim: Callable[[], int] | None = None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            native = getattr(libc, "malloc_trim", None)
        except OSError:
            native = None
        if native is not None:
            native.argtypes = [ctypes.c_size_t]
            native.restype = ctypes.c_int
            trim = lambda: int(native(0))  # noqa: E731
        _found.append(trim)
    return _found[0]
