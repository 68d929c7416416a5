"""Keeping the agent's own memory files searchable: the one refresh the memory tools share.

``workspace_memory`` calls :func:`refresh_index` right after it writes MEMORY.md, a daily
log or a bootstrap file (the text is searchable at once), and both ``workspace_memory``
``search`` and ``memory_search`` call it before searching, so an edit a person made in an
editor is found by the next search. A refresh is one incremental pass of
:meth:`beamclaw_memory.MemoryService.index_workspace`: it stats the known files and
re-reads only those whose size or mtime moved, so an unchanged workspace costs a few
``stat`` calls. It never fails the tool: a failure becomes a note in the tool's output.
"""

from __future__ import annotations

from pathlib import Path

from beamclaw_memory import BeamclawMemoryError, MemoryService


async def refresh_index(memory: MemoryService, agent_id: str, workspace: Path | None) -> str | None:
    """Bring ``agent_id``'s workspace index up to date; None, or a note saying why not.

    ``workspace`` None means the memory service's default (``$BEAMCLAW_HOME/agents/<id>``).
    """
    try:
        await memory.index_workspace(agent_id, workspace)
    except (BeamclawMemoryError, OSError) as exc:
        return f"workspace files were not re-indexed: {exc}"
    return None
