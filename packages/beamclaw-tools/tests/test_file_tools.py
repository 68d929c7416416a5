from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from beamclaw_tools import SessionRef, ToolCall, ToolRegistry, ToolResult, ToolsSettings


@pytest.fixture
def reg(tmp_path: Path) -> ToolRegistry:
    extra = tmp_path / "extra"
    extra.mkdir()
    settings = ToolsSettings.model_validate(
        {"files": {"extra_roots": [str(extra)], "max_read_bytes": 5000}}
    )
    return ToolRegistry.with_builtins(settings)


def tree(root: Path) -> list[Path]:
    return sorted(root.rglob("*"))


async def run(reg: ToolRegistry, session: SessionRef, name: str, **args: Any) -> ToolResult:
    return await reg.execute(ToolCall(id="c", name=name, args=args), session)


async def test_write_read_roundtrip(
    reg: ToolRegistry, session: SessionRef, workspace: Path
) -> None:
    r = await run(reg, session, "write_file", path="notes/a.txt", content="one\ntwo\nthree\n")
    assert not r.is_error
    assert r.content == "created notes/a.txt (14 bytes)"
    r = await run(reg, session, "read_file", path="notes/a.txt")
    assert r.content == "one\ntwo\nthree\n"
    r = await run(reg, session, "read_file", path="notes/a.txt", offset=2, limit=1)
    assert r.content == "two\n"
    r = await run(reg, session, "read_file", path="notes/a.txt", offset=9)
    assert r.is_error
    assert "past the end" in r.content
    r = await run(reg, session, "write_file", path="notes/a.txt", content="new")
    assert r.content.startswith("overwrote")
    r = await run(reg, session, "write_file", path="x/y.txt", content="z", create_dirs=False)
    assert r.is_error
    assert "does not exist" in r.content


async def test_extra_root_and_refusals(
    reg: ToolRegistry, session: SessionRef, tmp_path: Path, workspace: Path
) -> None:
    r = await run(reg, session, "write_file", path=str(tmp_path / "extra" / "e.txt"), content="e")
    assert not r.is_error
    (tmp_path / "secret.txt").write_text("top secret")
    os.symlink(tmp_path / "secret.txt", workspace / "sneaky")
    for name, args in [
        ("read_file", {"path": "../secret.txt"}),
        ("read_file", {"path": str(tmp_path / "secret.txt")}),
        ("read_file", {"path": "sneaky"}),
        ("write_file", {"path": "sneaky", "content": "x"}),
        ("edit_file", {"path": "sneaky", "old_text": "top", "new_text": "x"}),
        ("delete_file", {"path": "sneaky"}),
        ("list_dir", {"path": "/"}),
        ("keyword_search", {"pattern": "x", "path": "/etc"}),
        ("jq", {"filter": ".", "path": "../secret.txt"}),
    ]:
        r = await run(reg, session, name, **args)
        assert r.is_error, (name, r.content)
        assert "refused" in r.content, (name, r.content)
    assert (tmp_path / "secret.txt").read_text() == "top secret"


async def test_binary_and_large_files(
    reg: ToolRegistry, session: SessionRef, workspace: Path
) -> None:
    (workspace / "img.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 10)
    r = await run(reg, session, "read_file", path="img.bin")
    assert r.is_error
    assert "binary file (70 bytes)" in r.content
    r = await run(reg, session, "edit_file", path="img.bin", old_text="PNG", new_text="x")
    assert r.is_error
    assert "binary" in r.content
    (workspace / "big.txt").write_text("a" * 6000)
    r = await run(reg, session, "read_file", path="big.txt")
    assert "file larger than 5000 bytes; rest not read" in r.content
    r = await run(reg, session, "read_file", path="missing.txt")
    assert r.is_error
    assert "no such file" in r.content
    r = await run(reg, session, "read_file", path=".")
    assert r.is_error
    assert "is a directory" in r.content


async def test_edit_file_exact_replacement(
    reg: ToolRegistry, session: SessionRef, workspace: Path
) -> None:
    f = workspace / "code.py"
    f.write_text("x = 1\ny = 1\nx = 1\n")
    r = await run(reg, session, "edit_file", path="code.py", old_text="y = 1", new_text="y = 2")
    assert not r.is_error
    assert f.read_text() == "x = 1\ny = 2\nx = 1\n"
    r = await run(reg, session, "edit_file", path="code.py", old_text="x = 1", new_text="x = 3")
    assert r.is_error
    assert "appears 2 times" in r.content
    assert f.read_text() == "x = 1\ny = 2\nx = 1\n"
    r = await run(reg, session, "edit_file", path="code.py", old_text="zzz", new_text="q")
    assert r.is_error
    assert "not found" in r.content
    r = await run(
        reg,
        session,
        "edit_file",
        path="code.py",
        old_text="x = 1",
        new_text="x = 3",
        replace_all=True,
    )
    assert not r.is_error
    assert f.read_text() == "x = 3\ny = 2\nx = 3\n"
    r = await run(reg, session, "edit_file", path="code.py", old_text="", new_text="q")
    assert r.is_error
    assert "old_text" in r.content


async def test_delete_and_list(reg: ToolRegistry, session: SessionRef, workspace: Path) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "f.txt").write_text("hello")
    (workspace / "top.txt").write_text("x")
    r = await run(reg, session, "list_dir", depth=2)
    assert r.content.splitlines() == ["d/", "  f.txt (5)", "top.txt (1)"]
    r = await run(reg, session, "list_dir", max_entries=1)
    assert "more entries not shown" in r.content
    r = await run(reg, session, "delete_file", path="d")
    assert r.is_error
    assert "cannot delete" in r.content
    assert not (await run(reg, session, "delete_file", path="d/f.txt")).is_error
    assert not (await run(reg, session, "delete_file", path="d")).is_error
    r = await run(reg, session, "delete_file", path=".")
    assert r.is_error
    assert "workspace root" in r.content
    r = await run(reg, session, "delete_file", path="gone.txt")
    assert r.is_error
    assert "no such file" in r.content
    r = await run(reg, session, "list_dir", path="top.txt")
    assert r.is_error
    assert "not a directory" in r.content


async def test_keyword_search(reg: ToolRegistry, session: SessionRef, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("def Alpha():\n    return 1\n")
    (workspace / "src" / "b.txt").write_text("alpha beta\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("alpha hidden\n")
    (workspace / "blob.bin").write_bytes(b"alpha\x00\x00")
    r = await run(reg, session, "keyword_search", pattern="alpha")
    assert r.content.splitlines() == ["src/a.py:1: def Alpha():", "src/b.txt:1: alpha beta"]
    r = await run(reg, session, "keyword_search", pattern="alpha", case_sensitive=True, glob="*.py")
    assert "no matches" in r.content
    r = await run(reg, session, "keyword_search", pattern=r"def \w+\(", regex=True)
    assert r.content == "src/a.py:1: def Alpha():"
    r = await run(
        reg, session, "keyword_search", pattern="alpha", include_hidden=True, max_matches=1
    )
    assert "stopped at the limit" in r.content
    r = await run(reg, session, "keyword_search", pattern="(", regex=True)
    assert r.is_error
    assert "invalid regex" in r.content
    r = await run(reg, session, "keyword_search", pattern="(")
    assert not r.is_error  # literal by default


async def test_jq(reg: ToolRegistry, session: SessionRef, workspace: Path) -> None:
    r = await run(
        reg, session, "jq", filter=".items[].name", input='{"items":[{"name":"a"},{"name":"b"}]}'
    )
    assert r.content == '"a"\n"b"'
    r = await run(reg, session, "jq", filter=".[]", input='["x"]', raw_output=True)
    assert r.content == "x"
    (workspace / "d.json").write_text('{"n": 2}')
    r = await run(reg, session, "jq", filter=".n * 3", path="d.json")
    assert r.content == "6"
    r = await run(reg, session, "jq", filter="repeat(1)", input="null")
    assert "stopped after 10000 results" in r.content
    r = await run(reg, session, "jq", filter=".[", input="{}")
    assert r.is_error
    assert "jq error" in r.content
    r = await run(reg, session, "jq", filter=".", input="{bad")
    assert r.is_error
    assert "parse error" in r.content
    r = await run(reg, session, "jq", filter=".")
    assert r.is_error
    assert "exactly one of" in r.content


async def test_think_has_no_side_effects(
    reg: ToolRegistry, session: SessionRef, workspace: Path
) -> None:
    before = tree(workspace)
    r = await run(reg, session, "think", thought="first read, then edit")
    assert not r.is_error
    assert r.structured == {"thought": "first read, then edit"}
    assert tree(workspace) == before
    r = await run(reg, session, "think")
    assert r.is_error
