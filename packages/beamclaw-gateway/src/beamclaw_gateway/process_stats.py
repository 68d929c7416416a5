"""Process gauges appended to ``/metrics``: live asyncio tasks and open file descriptors.

Read at scrape time (no collector keeps state). The fault suite and the benchmarks check
that both return to their baseline after a load or a fault; the fd count is ``None`` (and
left out) where ``/proc/self/fd`` does not exist.
"""

from __future__ import annotations

import asyncio
import os

__all__ = ["process_metrics"]


def _open_fds() -> int | None:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None


def process_metrics() -> bytes:
    """Prometheus text for ``beamclaw_process_asyncio_tasks`` and
    ``beamclaw_process_open_fds``; call it on the event loop."""
    lines = [
        "# HELP beamclaw_process_asyncio_tasks Live asyncio tasks of the gateway process.",
        "# TYPE beamclaw_process_asyncio_tasks gauge",
        f"beamclaw_process_asyncio_tasks {len(asyncio.all_tasks())}",
    ]
    fds = _open_fds()
    if fds is not None:
        lines += [
            "# HELP beamclaw_process_open_fds Open file descriptors of the gateway process.",
            "# TYPE beamclaw_process_open_fds gauge",
            f"beamclaw_process_open_fds {fds}",
        ]
    return ("\n".join(lines) + "\n").encode()
