from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from beamclaw_tools import SessionRef, ToolCall, ToolOutput, ToolResult
from beamclaw_tools.builtin import WorkspaceMemoryTool


@dataclass(frozen=True)
class Hit:
    key: str
    text: str
    score: float
    category: str
    source: str | None = None
    lines: tuple[int, int] | None = None

    @property
    def origin(self) -> str:
        return self.source or self.key


@dataclass(frozen=True)
class Found:
    hits: tuple[Hit, ...]
    mode: str
    degraded_reason: str | None = None


@dataclass(frozen=True)
class Stored:
    key: str
    category: str


class FakeMemory:
    """A ``MemoryPort`` double in plain strings (beamclaw-tools does not need
    beamclaw-memory): records search and index calls, answers from a fixed hit."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []
        self.indexed: list[tuple[str, Path | None]] = []

    async def store(
        self, agent_id: str, key: str, value: str, category: str, *, source: str | None = None
    ) -> Stored:
        return Stored(key=key, category=category)

    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        mode: str = "hybrid",
        limit: int = 5,
        category: str | None = None,
    ) -> Found:
        self.calls.append((agent_id, query, limit))
        hit = Hit(key="pref:tea", text="likes green tea", score=0.9, category="core")
        return Found(hits=(hit,), mode="keyword", degraded_reason="embeddings unavailable")

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> None:
        self.indexed.append((agent_id, workspace))


def tool(memory: FakeMemory | None = None) -> WorkspaceMemoryTool:
    return WorkspaceMemoryTool(memory, today=lambda: dt.date(2026, 3, 4))


async def act(t: WorkspaceMemoryTool, session: SessionRef, **args: Any) -> ToolOutput:
    return await t.execute(args, session)


async def test_memory_md_actions(session: SessionRef, beamclaw_home: Path) -> None:
    t = tool()
    md = beamclaw_home / "agents" / "default" / "MEMORY.md"
    assert (await act(t, session, action="read")).content == "(MEMORY.md is empty)"
    await act(t, session, action="append", content="- likes tea")
    await act(t, session, action="append", content="- lives in Lyon\n")
    assert md.read_text() == "- likes tea\n- lives in Lyon\n"
    assert (await act(t, session, action="read")).content == md.read_text()
    await act(t, session, action="replace", content="# Memory\nfresh")
    assert md.read_text() == "# Memory\nfresh\n"
    r = await act(t, session, action="append")
    assert r.is_error
    assert "needs 'content'" in r.content


async def test_paths_come_from_agent_id_only(beamclaw_home: Path, tmp_path: Path) -> None:
    # the session's workspace field is ignored: the agent id decides
    other = SessionRef(session_id="s", agent_id="alice", workspace=tmp_path / "elsewhere")
    await act(tool(), other, action="append", content="x")
    assert (beamclaw_home / "agents" / "alice" / "MEMORY.md").exists()
    assert not (tmp_path / "elsewhere").exists()
    bad = SessionRef(session_id="s", agent_id="../evil")
    r = await act(tool(), bad, action="read")
    assert r.is_error
    assert "agent id" in r.content


async def test_daily_logs(session: SessionRef, beamclaw_home: Path) -> None:
    t = tool()
    assert (await act(t, session, action="list_daily")).content == "(no daily logs yet)"
    await act(t, session, action="append_daily", content="met Bob")
    daily = beamclaw_home / "agents" / "default" / "memory"
    (daily / "2026-03-01.md").write_text("older\n")
    (daily / "notes.md").write_text("not a day\n")
    assert (await act(t, session, action="read_daily")).content == "met Bob\n"
    assert (await act(t, session, action="read_daily", date="2026-03-01")).content == "older\n"
    assert (await act(t, session, action="list_daily")).content == "2026-03-04\n2026-03-01"
    r = await act(t, session, action="read_daily", date="../../x")
    assert r.is_error
    assert "YYYY-MM-DD" in r.content
    r = await act(t, session, action="read_daily", date="2026-02-31")
    assert r.is_error
    assert "not a valid date" in r.content
    r = await act(t, session, action="read_daily", date="2020-01-01")
    assert r.content == "(no daily log for 2020-01-01)"


async def test_bootstrap_allowed_sets(session: SessionRef, beamclaw_home: Path) -> None:
    t = tool()
    root = beamclaw_home / "agents" / "default"
    r = await act(t, session, action="update_bootstrap", file="USER.md", content="Name: Ada")
    assert not r.is_error
    assert (root / "USER.md").read_text() == "Name: Ada\n"
    assert (await act(t, session, action="read_bootstrap", file="USER.md")).content == "Name: Ada\n"
    for action, file in [
        ("update_bootstrap", "MEMORY.md"),
        ("update_bootstrap", "BOOTSTRAP.md"),
        ("read_bootstrap", "../x.md"),
        ("delete_bootstrap", "SOUL.md"),
        ("read_bootstrap", "secrets.txt"),
    ]:
        r = await act(t, session, action=action, file=file, content="x")
        assert r.is_error, (action, file)
        assert "not allowed" in r.content, (action, file)
    r = await act(t, session, action="read_bootstrap")
    assert r.is_error
    assert "needs 'file'" in r.content
    (root / "BOOTSTRAP.md").write_text("first run ritual")
    assert (
        "first run" in (await act(t, session, action="read_bootstrap", file="BOOTSTRAP.md")).content
    )
    assert (
        await act(t, session, action="delete_bootstrap", file="BOOTSTRAP.md")
    ).content == "deleted BOOTSTRAP.md"
    assert not (root / "BOOTSTRAP.md").exists()
    r = await act(t, session, action="delete_bootstrap", file="BOOTSTRAP.md")
    assert r.content == "BOOTSTRAP.md was already deleted"


async def test_symlinked_memory_file_refused(
    session: SessionRef, beamclaw_home: Path, tmp_path: Path
) -> None:
    root = beamclaw_home / "agents" / "default"
    root.mkdir(parents=True)
    (tmp_path / "outside.md").write_text("outside")
    os.symlink(tmp_path / "outside.md", root / "MEMORY.md")
    r = await act(tool(), session, action="append", content="x")
    assert r.is_error
    assert "symlink" in r.content
    assert (tmp_path / "outside.md").read_text() == "outside"


async def test_search(session: SessionRef, beamclaw_home: Path) -> None:
    r = await act(tool(), session, action="search", query="tea")
    assert r.is_error
    assert r.content == "memory search is not configured"
    memory = FakeMemory()
    r = await act(tool(memory), session, action="search", query="tea", limit=3)
    assert not r.is_error
    assert "1 result(s) (keyword search); degraded: embeddings unavailable" in r.content
    assert "pref:tea" in r.content
    assert "likes green tea" in r.content
    assert memory.calls == [("default", "tea", 3)]
    # the workspace is brought up to date before the search
    assert memory.indexed == [("default", beamclaw_home / "agents" / "default")]
    r = await act(tool(memory), session, action="search")
    assert r.is_error
    assert "needs 'query'" in r.content


async def test_invalid_action(session: SessionRef) -> None:
    r = await act(tool(), session, action="format_disk")
    assert r.is_error
    assert "action" in r.content


async def test_through_registry(session: SessionRef) -> None:
    from beamclaw_tools import ToolRegistry

    reg = ToolRegistry.with_builtins()
    result: ToolResult = await reg.execute(
        ToolCall(id="c", name="workspace_memory", args={"action": "list_daily"}), session
    )
    assert result.content == "(no daily logs yet)"
