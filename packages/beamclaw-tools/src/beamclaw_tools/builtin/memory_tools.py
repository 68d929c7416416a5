"""``memory_search`` and ``memory_store``: the agent's searchable memory as tools.

``memory_search`` first brings the agent's workspace index up to date (MEMORY.md, daily
logs, bootstrap files; unchanged files cost nothing; :mod:`.memory_index`), then searches;
each hit names its origin (file and lines, session, or key). It never fails
because embeddings are unavailable: the memory service degrades to keyword search and the
output says so. ``memory_store`` records a fact (category ``core`` unless told otherwise)
with the calling session as its source. Both run at ``read_only`` autonomy without
approval, like ``workspace_memory`` (seed 003).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.builtin.memory_index import refresh_index
from beamclaw_tools.errors import MemoryInputRejectedError, MemoryUnavailableError
from beamclaw_tools.memory_port import MemoryPort
from beamclaw_tools.types import SessionRef, Tool, ToolOutput

MAX_HIT_CHARS = 1200
"""Each hit's text is cut to this many characters in the tool output."""

Category = Literal["core", "daily", "conversation", "custom"]


class MemorySearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=4000, description="What to look for.")
    limit: int = Field(default=5, ge=1, le=20, description="Maximum number of results.")
    mode: Literal["hybrid", "keyword", "semantic"] = Field(
        default="hybrid", description="hybrid (default), keyword or semantic ranking."
    )
    category: Category | None = Field(
        default=None, description="Only this category (core, daily, conversation, custom)."
    )


class MemoryStoreArgs(ToolArgs):
    key: str = Field(
        min_length=1, max_length=512, description="A short stable name, e.g. 'user.birthday'."
    )
    value: str = Field(min_length=1, description="The fact to remember, self-contained.")
    category: Category = Field(default="core", description="core (default), daily or custom.")


class MemorySearchTool(TypedTool[MemorySearchArgs]):
    """Search the agent's memory: stored facts, workspace files and past conversations."""

    def __init__(self, memory: MemoryPort) -> None:
        super().__init__(
            MemorySearchArgs,
            make_definition(
                "memory_search",
                "Search your long-term memory: facts you stored, MEMORY.md, daily logs, "
                "bootstrap files and past conversations. Use it before saying you don't "
                "know something about the user or earlier work.",
                MemorySearchArgs,
                timeout_seconds=60.0,
            ),
        )
        self._memory = memory

    async def run(self, args: MemorySearchArgs, session: SessionRef) -> ToolOutput:
        note = await refresh_index(self._memory, session.agent_id, session.workspace)
        notes = [note] if note is not None else []
        result = await self._memory.search(
            session.agent_id,
            args.query,
            mode=args.mode,
            limit=args.limit,
            category=args.category,
        )
        if result.degraded_reason:
            notes.append(f"{result.mode} search only: {result.degraded_reason}")
        lines = [f"{len(result.hits)} result(s) ({result.mode} search)"]
        lines.extend(f"note: {n}" for n in notes)
        for i, hit in enumerate(result.hits, start=1):
            text = hit.text if len(hit.text) <= MAX_HIT_CHARS else hit.text[:MAX_HIT_CHARS] + "…"
            lines.append(f"[{i}] score {hit.score:.2f} · {hit.category} · {hit.origin}\n{text}")
        return ToolOutput(
            content="\n\n".join(lines),
            structured={
                "mode": str(result.mode),
                "degraded_reason": result.degraded_reason,
                "hits": [
                    {
                        "key": h.key,
                        "score": h.score,
                        "category": str(h.category),
                        "source": h.source,
                        "lines": list(h.lines) if h.lines is not None else None,
                        "text": h.text[:MAX_HIT_CHARS],
                    }
                    for h in result.hits
                ],
            },
        )


class MemoryStoreTool(TypedTool[MemoryStoreArgs]):
    """Remember a fact under a key (replacing what the key held)."""

    def __init__(self, memory: MemoryPort) -> None:
        super().__init__(
            MemoryStoreArgs,
            make_definition(
                "memory_store",
                "Remember a fact for later conversations (replaces the value of an existing "
                "key). Store durable facts about the user, decisions and preferences.",
                MemoryStoreArgs,
                timeout_seconds=60.0,
            ),
        )
        self._memory = memory

    async def run(self, args: MemoryStoreArgs, session: SessionRef) -> ToolOutput:
        try:
            entry = await self._memory.store(
                session.agent_id,
                args.key,
                args.value,
                args.category,
                source=f"session:{session.session_id}",
            )
        except MemoryInputRejectedError as exc:
            return ToolOutput.error(f"not stored: {exc.reason}")
        except MemoryUnavailableError as exc:
            return ToolOutput.error(f"not stored: memory is unavailable ({exc})")
        return ToolOutput(
            content=f"stored '{entry.key}' ({entry.category})",
            structured={"key": entry.key, "category": str(entry.category)},
        )


def memory_tools(memory: MemoryPort) -> list[Tool]:
    """The ``memory_search`` and ``memory_store`` tools over ``memory``."""
    return [MemorySearchTool(memory), MemoryStoreTool(memory)]
