from __future__ import annotations

from pathlib import Path

import pytest

from beamclaw_tools import SessionRef, ToolCall, ToolRegistry, ToolResult
from beamclaw_tools.builtin.patching import apply_file_patch, parse_patch
from beamclaw_tools.errors import PatchError


async def patch(session: SessionRef, text: str) -> ToolResult:
    reg = ToolRegistry.with_builtins()
    return await reg.execute(ToolCall(id="c", name="apply_patch", args={"patch": text}), session)


MULTI = """\
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
--- /dev/null
+++ b/new/b.txt
@@ -0,0 +1,2 @@
+hello
+world
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
"""


async def test_multi_file_patch(session: SessionRef, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    (workspace / "gone.txt").write_text("bye\n")
    r = await patch(session, MULTI)
    assert not r.is_error, r.content
    assert r.content == "patch applied: updated a.txt, created new/b.txt, deleted gone.txt"
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert (workspace / "new" / "b.txt").read_text() == "hello\nworld\n"
    assert not (workspace / "gone.txt").exists()


async def test_all_or_nothing(session: SessionRef, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    (workspace / "gone.txt").write_text("something else\n")
    r = await patch(session, MULTI)
    assert r.is_error
    assert "nothing was changed" in r.content
    assert "gone.txt" in r.content
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert not (workspace / "new").exists()


async def test_refusals(session: SessionRef, workspace: Path) -> None:
    r = await patch(session, "not a diff at all")
    assert r.is_error
    assert "no file changes" in r.content
    escape = "--- a/../x.txt\n+++ b/../x.txt\n@@ -1 +1 @@\n-a\n+b\n"
    r = await patch(session, escape)
    assert r.is_error
    assert "refused" in r.content
    (workspace / "exists.txt").write_text("x\n")
    create = "--- /dev/null\n+++ b/exists.txt\n@@ -0,0 +1 @@\n+y\n"
    r = await patch(session, create)
    assert r.is_error
    assert "already exists" in r.content
    (workspace / "bin.dat").write_bytes(b"\x00\x01")
    r = await patch(session, "--- a/bin.dat\n+++ b/bin.dat\n@@ -1 +1 @@\n-a\n+b\n")
    assert r.is_error
    assert "binary" in r.content


def test_hunk_offset_and_no_newline() -> None:
    (fp,) = parse_patch(
        "--- x\n+++ x\n@@ -1,2 +1,2 @@\n c\n-d\n\\ No newline at end of file\n+D\n"
        "\\ No newline at end of file\n"
    )
    assert apply_file_patch("a\nb\nc\nd", fp) == "a\nb\nc\nD"  # found at an offset
    with pytest.raises(PatchError, match="hunk 1"):
        apply_file_patch("c\nx", fp)


def test_rename(tmp_path: Path) -> None:
    (fp,) = parse_patch("--- a/old.txt\n+++ b/new.txt\n@@ -1 +1 @@\n-a\n+b\n")
    assert (fp.source, fp.target) == ("old.txt", "new.txt")


async def test_rename_applies(session: SessionRef, workspace: Path) -> None:
    (workspace / "old.txt").write_text("a\n")
    r = await patch(session, "--- a/old.txt\n+++ b/new.txt\n@@ -1 +1 @@\n-a\n+b\n")
    assert not r.is_error, r.content
    assert (workspace / "new.txt").read_text() == "b\n"
    assert not (workspace / "old.txt").exists()
