"""``workspace_memory``: the agent's MEMORY.md, daily logs and bootstrap files (seed 003).

Paths are built from the session's agent id only (``$BEAMCLAW_HOME/agents/<agent_id>``,
validated); the model never supplies a path, only a bootstrap *file name* from a fixed
set. Needs no approval and runs at ``read_only`` (seed 003).

Actions: ``read`` / ``append`` / ``replace`` (MEMORY.md); ``read_daily`` /
``append_daily`` / ``list_daily`` (``memory/YYYY-MM-DD.md``); ``read_bootstrap`` /
``update_bootstrap`` / ``delete_bootstrap`` (allowed sets below); ``search`` (the
injected :class:`~beamclaw_tools.memory_port.MemoryPort`).

With a memory service, every successful write re-indexes the workspace at once and every
``search`` first re-indexes what changed outside the tool (:mod:`.memory_index`), so the
search covers MEMORY.md and the daily logs as they are now; each hit names its file and
lines. Indexing never fails a write: the output says when the text is not searchable yet.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.builtin.files import write_atomic
from beamclaw_tools.builtin.memory_index import INDEX_BUDGET_SECONDS, refresh_index
from beamclaw_tools.errors import InvalidAgentIdError, PathOutsideRootsError
from beamclaw_tools.memory_port import MemoryPort
from beamclaw_tools.paths import WorkspaceRoots, agent_workspace
from beamclaw_tools.types import SessionRef, ToolOutput

MEMORY_FILE = "MEMORY.md"
DAILY_DIR = "memory"
BOOTSTRAP_READABLE = frozenset(
    {"IDENTITY.md", "SOUL.md", "USER.md", "TOOLS.md", "AGENTS.md", "BOOTSTRAP.md"}
)
BOOTSTRAP_UPDATABLE = frozenset({"IDENTITY.md", "SOUL.md", "USER.md", "TOOLS.md", "AGENTS.md"})
BOOTSTRAP_DELETABLE = frozenset({"BOOTSTRAP.md"})
"""BOOTSTRAP.md is the first-run ritual: the agent deletes it when done."""
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_WRITES = frozenset({"append", "replace", "append_daily", "update_bootstrap", "delete_bootstrap"})

Action = Literal[
    "read",
    "append",
    "replace",
    "read_daily",
    "append_daily",
    "list_daily",
    "read_bootstrap",
    "update_bootstrap",
    "delete_bootstrap",
    "search",
]


class WorkspaceMemoryArgs(ToolArgs):
    action: Action
    content: str | None = Field(
        default=None, description="Text for append/replace/append_daily/update_bootstrap."
    )
    date: str | None = Field(default=None, description="YYYY-MM-DD for read_daily (default today).")
    file: str | None = Field(
        default=None, description="Bootstrap file name, e.g. USER.md (bootstrap actions)."
    )
    query: str | None = Field(default=None, description="Search text (action=search).")
    limit: int = Field(default=5, ge=1, le=50)


def _sorted_names(names: frozenset[str]) -> str:
    return ", ".join(sorted(names))


class WorkspaceMemoryTool(TypedTool[WorkspaceMemoryArgs]):
    def __init__(
        self,
        memory: MemoryPort | None = None,
        today: Callable[[], dt.date] = dt.date.today,
        *,
        index_budget_seconds: float = INDEX_BUDGET_SECONDS,
    ) -> None:
        self._memory = memory
        self._today = today
        self._index_budget = index_budget_seconds
        super().__init__(
            WorkspaceMemoryArgs,
            make_definition(
                "workspace_memory",
                "Manage your long-term memory (MEMORY.md: read/append/replace), daily logs "
                "(read_daily/append_daily/list_daily), your bootstrap files (read_bootstrap/"
                "update_bootstrap for " + _sorted_names(BOOTSTRAP_UPDATABLE) + "; "
                "delete_bootstrap for BOOTSTRAP.md when the first-run ritual is done) and "
                "search your memory (search).",
                WorkspaceMemoryArgs,
                timeout_seconds=30.0,
            ),
        )

    async def run(self, args: WorkspaceMemoryArgs, session: SessionRef) -> ToolOutput:
        try:
            root = agent_workspace(session.agent_id)
        except InvalidAgentIdError as e:
            return ToolOutput.error(str(e))
        action = args.action
        try:
            if action in ("read", "append", "replace"):
                out = self._memory_md(root, args)
            elif action in ("read_daily", "append_daily", "list_daily"):
                out = self._daily(root, args)
            elif action in ("read_bootstrap", "update_bootstrap", "delete_bootstrap"):
                out = self._bootstrap(root, args)
            else:
                return await self._search(session, root, args)
        except PathOutsideRootsError as e:
            return ToolOutput.error(str(e))
        except OSError as e:
            return ToolOutput.error(f"workspace_memory {action} failed: {e.strerror or e}")
        if action in _WRITES and not out.is_error and self._memory is not None:
            note = await refresh_index(
                self._memory, session.agent_id, root, budget=self._index_budget
            )
            if note is not None:
                return ToolOutput.ok(f"{out.content} (not searchable yet: {note})")
        return out

    # ----------------------------------------------------------------- MEMORY.md
    def _memory_md(self, root: Path, args: WorkspaceMemoryArgs) -> ToolOutput:
        path = _inside(root, MEMORY_FILE)
        if args.action == "read":
            return ToolOutput.ok(_read(path) or "(MEMORY.md is empty)")
        if args.content is None:
            return ToolOutput.error(f"action {args.action!r} needs 'content'")
        root.mkdir(parents=True, exist_ok=True)
        if args.action == "append":
            _append(path, args.content)
            return ToolOutput.ok(f"appended {len(args.content)} characters to MEMORY.md")
        write_atomic(path, _with_newline(args.content))
        return ToolOutput.ok(f"replaced MEMORY.md ({len(args.content)} characters)")

    # ----------------------------------------------------------------- daily logs
    def _daily(self, root: Path, args: WorkspaceMemoryArgs) -> ToolOutput:
        directory = root / DAILY_DIR
        if args.action == "list_daily":
            if not directory.is_dir():
                return ToolOutput.ok("(no daily logs yet)")
            days = sorted(
                (p.stem for p in directory.glob("*.md") if _DATE.match(p.stem)), reverse=True
            )
            return ToolOutput.ok("\n".join(days) if days else "(no daily logs yet)")
        if args.action == "append_daily":
            if args.content is None:
                return ToolOutput.error("action 'append_daily' needs 'content'")
            day = self._today().isoformat()
            directory.mkdir(parents=True, exist_ok=True)
            _append(_inside(root, f"{DAILY_DIR}/{day}.md"), args.content)
            return ToolOutput.ok(f"appended to daily log {day}")
        day = args.date or self._today().isoformat()
        if not _DATE.match(day):
            return ToolOutput.error(f"date {day!r} is not YYYY-MM-DD")
        try:
            dt.date.fromisoformat(day)
        except ValueError:
            return ToolOutput.error(f"date {day!r} is not a valid date")
        return ToolOutput.ok(
            _read(_inside(root, f"{DAILY_DIR}/{day}.md")) or f"(no daily log for {day})"
        )

    # ----------------------------------------------------------------- bootstrap
    def _bootstrap(self, root: Path, args: WorkspaceMemoryArgs) -> ToolOutput:
        allowed = {
            "read_bootstrap": BOOTSTRAP_READABLE,
            "update_bootstrap": BOOTSTRAP_UPDATABLE,
            "delete_bootstrap": BOOTSTRAP_DELETABLE,
        }[args.action]
        if args.file is None:
            return ToolOutput.error(
                f"action {args.action!r} needs 'file' (one of {_sorted_names(allowed)})"
            )
        if args.file not in allowed:
            return ToolOutput.error(
                f"file {args.file!r} is not allowed for {args.action}; "
                f"allowed: {_sorted_names(allowed)}"
            )
        path = _inside(root, args.file)
        if args.action == "read_bootstrap":
            return ToolOutput.ok(_read(path) or f"({args.file} is empty or missing)")
        if args.action == "delete_bootstrap":
            if not path.exists():
                return ToolOutput.ok(f"{args.file} was already deleted")
            path.unlink()
            return ToolOutput.ok(f"deleted {args.file}")
        if args.content is None:
            return ToolOutput.error("action 'update_bootstrap' needs 'content'")
        root.mkdir(parents=True, exist_ok=True)
        write_atomic(path, _with_newline(args.content))
        return ToolOutput.ok(f"updated {args.file} ({len(args.content)} characters)")

    # ----------------------------------------------------------------- search
    async def _search(
        self, session: SessionRef, root: Path, args: WorkspaceMemoryArgs
    ) -> ToolOutput:
        if self._memory is None:
            return ToolOutput.error("memory search is not configured")
        if not args.query or not args.query.strip():
            return ToolOutput.error("action 'search' needs 'query'")
        note = await refresh_index(self._memory, session.agent_id, root, budget=self._index_budget)
        result = await self._memory.search(session.agent_id, args.query, limit=args.limit)
        lines = [
            f"{i}. [{hit.category}] {hit.origin} (score {hit.score:.3f})\n   {hit.text}"
            for i, hit in enumerate(result.hits, 1)
        ]
        header = f"{len(result.hits)} result(s) ({result.mode} search)"
        if result.degraded_reason:
            header += f"; degraded: {result.degraded_reason}"
        if note is not None:
            header += f"; {note}"
        return ToolOutput(
            content="\n".join([header, *lines]),
            structured={
                "keys": [h.key for h in result.hits],
                "mode": str(result.mode),
                "hits": [
                    {
                        "key": h.key,
                        "source": h.source,
                        "lines": list(h.lines) if h.lines is not None else None,
                        "category": str(h.category),
                        "score": h.score,
                    }
                    for h in result.hits
                ],
            },
        )


def _inside(root: Path, relative: str) -> Path:
    """``root/relative``, refusing a symlink that leads out of the agent workspace."""
    return WorkspaceRoots((root,)).resolve(relative)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def _append(path: Path, content: str) -> None:
    existing = _read(path)
    separator = "" if not existing or existing.endswith("\n") else "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(separator + _with_newline(content))
