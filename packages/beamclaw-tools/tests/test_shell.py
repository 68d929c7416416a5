from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from beamclaw_obs import forget_secrets, register_secret
from beamclaw_tools import SessionRef, ShellSettings, ToolCall, ToolRegistry, ToolsSettings
from beamclaw_tools.builtin import child_environment


def registry(**bash: object) -> ToolRegistry:
    return ToolRegistry.with_builtins(ToolsSettings.model_validate({"bash": bash}))


async def run(reg: ToolRegistry, session: SessionRef, name: str = "bash", **args: object):
    return await reg.execute(ToolCall(id="c", name=name, args=args), session)


def resolved(path: Path) -> Path:
    return path.resolve()


def _dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def _wait_dead(pid: int) -> bool:
    for _ in range(200):
        if _dead(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_bash_runs_in_workspace(session: SessionRef, workspace: Path) -> None:
    r = await run(registry(), session, command="pwd; echo hi >&2; exit 0")
    assert not r.is_error
    assert str(resolved(workspace)) in r.content
    assert "hi" in r.content
    assert r.content.endswith("[exit status 0]")


async def test_bash_nonzero_exit_is_error(session: SessionRef) -> None:
    r = await run(registry(), session, command="echo nope; exit 3")
    assert r.is_error
    assert "[exit status 3]" in r.content


async def test_bash_timeout_kills_whole_group(session: SessionRef, workspace: Path) -> None:
    script = "sleep 300 & echo $! > child.pid; sleep 300"
    r = await run(registry(), session, command=script, timeout_seconds=1)
    assert r.is_error
    assert "timed out after 1 s; the process group was killed" in r.content
    child = int((workspace / "child.pid").read_text())
    assert await _wait_dead(child)


async def test_cancellation_kills_whole_group(session: SessionRef, workspace: Path) -> None:
    reg = registry()
    task = asyncio.create_task(run(reg, session, command="sleep 300 & echo $! > c.pid; wait"))
    for _ in range(200):
        if (workspace / "c.pid").exists() and (workspace / "c.pid").read_text().strip():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_dead(int((workspace / "c.pid").read_text()))


async def test_background_stragglers_do_not_survive(session: SessionRef, workspace: Path) -> None:
    r = await run(registry(), session, command="(sleep 300 & echo $! > s.pid) ; echo done")
    assert "done" in r.content
    assert await _wait_dead(int((workspace / "s.pid").read_text()))


async def test_output_truncated_with_marker(session: SessionRef) -> None:
    reg = registry(max_output_chars=1000)
    r = await run(reg, session, command="seq 1 100000; echo THE-END")
    assert "truncated:" in r.content
    assert "characters omitted" in r.content
    assert "THE-END" in r.content  # the tail is kept
    assert len(r.content) < 3000


async def test_env_stripped_of_secrets(
    session: SessionRef, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_KEY", "k1")
    monkeypatch.setenv("GITHUB_TOKEN", "k2")
    monkeypatch.setenv("PLAIN_LOOKING", "configured-secret-value-123")
    monkeypatch.setenv("DB_THING", "x")
    monkeypatch.setenv("HARMLESS", "visible")
    register_secret("configured-secret-value-123")
    try:
        reg = registry(strip_env=["DB_THING"])
        r = await run(reg, session, command="env")
    finally:
        forget_secrets()
    for gone in ("MY_API_KEY", "GITHUB_TOKEN", "PLAIN_LOOKING", "DB_THING"):
        assert gone not in r.content
    assert "HARMLESS=visible" in r.content


def test_child_environment_keep_list() -> None:
    env = child_environment(keep=["SSH_AUTH_SOCK"], base={"SSH_AUTH_SOCK": "/s", "X_TOKEN": "t"})
    assert env == {"SSH_AUTH_SOCK": "/s"}


async def test_terminal_runs_without_shell(session: SessionRef) -> None:
    reg = ToolRegistry.with_builtins()
    r = await run(reg, session, "terminal", command="echo 'a b' '$HOME' | cat")
    assert not r.is_error
    assert "a b $HOME | cat" in r.content
    r = await run(reg, session, "terminal", command="definitely-not-a-command-xyz")
    assert r.is_error
    assert "command not found" in r.content
    r = await run(reg, session, "terminal", command="echo 'unbalanced")
    assert r.is_error
    assert "cannot parse" in r.content


async def test_cwd_argument_confined(session: SessionRef, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    reg = registry()
    r = await run(reg, session, command="pwd", cwd="sub")
    assert str((workspace / "sub").resolve()) in r.content
    r = await run(reg, session, command="pwd", cwd="../")
    assert r.is_error
    assert "refused" in r.content
    r = await run(reg, session, command="pwd", cwd="/")
    assert r.is_error


async def test_bash_missing_command_arg(session: SessionRef) -> None:
    r = await run(registry(), session, timeout_seconds=1)
    assert r.is_error
    assert "command: required argument is missing" in r.content


def test_settings_defaults() -> None:
    assert ShellSettings().timeout_seconds == 60
    assert os.name == "posix"
