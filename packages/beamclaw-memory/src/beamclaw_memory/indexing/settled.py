"""Whether a workspace is exactly as a completed indexing pass left it, by ``stat`` alone.

A workspace's fingerprint is the ``(source, size, mtime_ns)`` of each indexable file.
:class:`SettledWorkspaces` remembers, per workspace, the fingerprint a completed pass
started from, but only when every file was *settled* then: last modified more than
``RACY_SECONDS`` before the pass ended. Coarse filesystem timestamps can hide a second
write within the same tick; a settled file has no such write pending, so an equal
fingerprint means an equal workspace and the pass may skip reading anything else.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from beamclaw_memory.indexing.sources import WorkspaceFile

RACY_SECONDS = 2.0
"""A stat is trusted only for files last modified this long before it was taken."""

Fingerprint = tuple[tuple[str, int, int], ...]


def fingerprint(files: Sequence[WorkspaceFile]) -> tuple[Fingerprint, float]:
    """The fingerprint of ``files`` (as their scan saw them) and their newest mtime."""
    newest = max((f.mtime_ns for f in files), default=0) / 1e9
    return tuple((f.source, f.size, f.mtime_ns) for f in files), newest


class SettledWorkspaces:
    """The fingerprints of workspaces whose last completed pass found them settled."""

    def __init__(self) -> None:
        self._seen: dict[Hashable, Fingerprint] = {}

    def unchanged(self, workspace: Hashable, seen: Fingerprint) -> bool:
        """True when ``seen`` is what the last completed, settled pass started from."""
        return self._seen.get(workspace) == seen

    def record(
        self, workspace: Hashable, seen: Fingerprint, newest: float, now: float, *, complete: bool
    ) -> None:
        """After a pass that started from ``seen``: remember it if the pass was complete and
        every file settled at ``now``, else forget the workspace."""
        if complete and now - newest > RACY_SECONDS:
            self._seen[workspace] = seen
        else:
            self._seen.pop(workspace, None)
