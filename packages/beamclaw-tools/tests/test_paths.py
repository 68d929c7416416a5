from __future__ import annotations

import os
from pathlib import Path

import pytest

from beamclaw_tools import (
    InvalidAgentIdError,
    PathOutsideRootsError,
    SessionRef,
    WorkspaceRoots,
    agent_workspace,
    is_binary,
)


def test_relative_path_resolves_inside_primary(workspace: Path) -> None:
    roots = WorkspaceRoots((workspace,))
    assert roots.resolve("a/b.txt") == workspace.resolve() / "a" / "b.txt"
    assert roots.resolve(".") == workspace.resolve()


def test_dotdot_refused_even_when_it_stays_inside(workspace: Path) -> None:
    roots = WorkspaceRoots((workspace,))
    for path in ("../x", "a/../../x", "a/../b"):
        with pytest.raises(PathOutsideRootsError, match=r"'\.\.'"):
            roots.resolve(path)


def test_absolute_outside_refused_inside_accepted(workspace: Path, tmp_path: Path) -> None:
    roots = WorkspaceRoots((workspace,))
    with pytest.raises(PathOutsideRootsError, match="absolute path outside"):
        roots.resolve("/etc/passwd")
    with pytest.raises(PathOutsideRootsError):
        roots.resolve(str(tmp_path / "other.txt"))
    inside = workspace / "f.txt"
    assert roots.resolve(str(inside)) == inside.resolve()


def test_symlink_escape_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    os.symlink(outside, workspace / "link")
    os.symlink(outside / "secret.txt", workspace / "file-link")
    os.symlink(tmp_path / "nowhere.txt", workspace / "dangling")
    roots = WorkspaceRoots((workspace,))
    for path in ("link/secret.txt", "file-link", "dangling", str(workspace / "link")):
        with pytest.raises(PathOutsideRootsError, match="symlink"):
            roots.resolve(path)


def test_symlink_inside_roots_allowed(workspace: Path) -> None:
    (workspace / "real.txt").write_text("x")
    os.symlink(workspace / "real.txt", workspace / "alias.txt")
    assert WorkspaceRoots((workspace,)).resolve("alias.txt") == (workspace / "real.txt").resolve()


def test_extra_roots(workspace: Path, tmp_path: Path) -> None:
    extra = tmp_path / "projects"
    extra.mkdir()
    session = SessionRef(session_id="s", agent_id="a", workspace=workspace)
    roots = WorkspaceRoots.for_session(session, [extra])
    assert roots.resolve(str(extra / "x.py")) == extra.resolve() / "x.py"
    assert roots.display(extra.resolve() / "x.py") == str(extra.resolve() / "x.py")
    assert roots.display(workspace.resolve() / "d" / "y") == "d/y"


def test_empty_and_nul_refused(workspace: Path) -> None:
    roots = WorkspaceRoots((workspace,))
    with pytest.raises(PathOutsideRootsError, match="empty"):
        roots.resolve("  ")
    with pytest.raises(PathOutsideRootsError, match="NUL"):
        roots.resolve("a\x00b")


def test_agent_workspace_validates_id(beamclaw_home: Path) -> None:
    assert agent_workspace("default") == beamclaw_home / "agents" / "default"
    for bad in ("../x", "a/b", "", ".hidden", "x" * 65, "a..b"):
        with pytest.raises(InvalidAgentIdError):
            agent_workspace(bad)


def test_session_without_workspace_uses_agent_dir(beamclaw_home: Path) -> None:
    session = SessionRef(session_id="s", agent_id="bob")
    assert (
        WorkspaceRoots.for_session(session).primary == (beamclaw_home / "agents" / "bob").resolve()
    )


def test_is_binary() -> None:
    assert is_binary(b"abc\x00def")
    assert is_binary(bytes(range(128, 256)))
    assert not is_binary("héllo wörld".encode())
    assert not is_binary("abcé".encode()[:-1])  # a character cut at the sample end
