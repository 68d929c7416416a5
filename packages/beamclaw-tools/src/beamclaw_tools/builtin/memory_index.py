"""Keeping the agent's own memory files searchable: the one refresh the memory tools share.

``workspace_memory`` calls :func:`refresh_index` right after it writes MEMORY.md, a daily
log or a bootstrap file (the text is searchable at once), and both ``workspace_memory``
``search`` and ``memory_search`` call it before searching, so an edit a person made in an
editor is found by the next search. A refresh is one incremental pass of
:meth:`~beamclaw_tools.memory_port.MemoryPort.index_workspace`: it stats the known files and
re-reads only those whose size or mtime moved, so an unchanged workspace costs a few
``stat`` calls.

A refresh never fails the tool and never outlives its budget (a hung embedding endpoint
must not turn a completed write into a tool timeout, which the model would retry): a
failure or an overrun becomes a note in the tool's output, and the next refresh picks up
whatever this one did not finish.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from beamclaw_tools.errors import MemoryUnavailableError
from beamclaw_tools.memory_port import MemoryPort

INDEX_BUDGET_SECONDS = 10.0
"""How long a refresh may take (the tools' own timeouts are 30 s and more)."""


async def refresh_index(
    memory: MemoryPort,
    agent_id: str,
    workspace: Path | None,
    *,
    budget: float = INDEX_BUDGET_SECONDS,
) -> str | None:
    """Bring ``agent_id``'s workspace index up to date; None, or a note saying why not.

    ``workspace`` None means the memory service's default (``$BEAMCLAW_HOME/agents/<id>``).
    """
    try:
        async with asyncio.timeout(budget):
            await memory.index_workspace(agent_id, workspace)
    except TimeoutError:
        return f"workspace files were not re-indexed within {budget:g} s (a later search will)"
    except (MemoryUnavailableError, OSError) as exc:
        return f"workspace files were not re-indexed: {exc}"
    return None
