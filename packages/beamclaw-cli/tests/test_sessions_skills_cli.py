"""``sessions``, ``skills``, ``tui`` guards and the CLI conventions, through the real entry point."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from beamclaw_cli.daemon import home_lock
from beamclaw_core import CoreSettings
from beamclaw_core.api import Core
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_memory import Database, resolve_database_url
from beamclaw_obs import beamclaw_home
from beamclaw_tools import Autonomy, ToolRegistry

from .conftest import Run


async def _make_session(text: str = "hello") -> str:
    """A real conversation in $BEAMCLAW_HOME's database: user, tool call, answer."""
    provider = ScriptedProvider(
        [CallTool("read_file", {"path": "missing.txt"}), Reply("Hello back!")]
    )
    database = Database(resolve_database_url(None, beamclaw_home()))
    core = Core.create(
        CoreSettings(autonomy_level=Autonomy.FULL),
        database,
        provider=provider,
        tools=ToolRegistry.with_builtins(),
        system_prompt="test",
    )
    await core.start(maintenance=False)
    try:
        handle = await core.send(SessionAddress("local:ann", "default", "tui"), text)
        assert await handle.text() == "Hello back!"
        return handle.session_id
    finally:
        await core.stop()
        await database.dispose()


def _one_line_error(stderr: str, fragment: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], stderr
    assert "Traceback" not in stderr


async def test_sessions_list_show_export_delete(run_cli: Run, beamclaw_home: Path) -> None:
    assert "no sessions yet" in run_cli("sessions", "list").stdout
    sid = await _make_session("hello there")
    listed = json.loads(run_cli("sessions", "list", "--json").stdout)
    assert [(s["id"], s["agent"], s["user"], s["state"]) for s in listed] == [
        (sid, "default", "local:ann", "idle")
    ]

    shown = run_cli("sessions", "show", sid[:14], "--json")  # a unique prefix is enough
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    roles = [m["message"]["role"] for m in data["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert data["messages_total"] == 4
    text = run_cli("sessions", "show", sid, "--limit", "1").stdout
    assert "Hello back!" in text and "hello there" not in text and "last 1 of 4" in text

    exported = json.loads(run_cli("sessions", "export", sid).stdout)
    assert exported["session"]["id"] == sid
    assert exported["messages"][2]["message"]["tool_call_id"]
    out = beamclaw_home.parent / "s.md"
    md = run_cli("sessions", "export", sid, "--format", "markdown", "-o", str(out))
    assert md.returncode == 0, md.stderr
    markdown = out.read_text()
    assert markdown.startswith(f"# Session {sid}")
    assert "## user" in markdown and "hello there" in markdown
    assert "Tool call `read_file`" in markdown and '"path": "missing.txt"' in markdown

    # while a gateway holds the home lock, delete goes through its API (it owns the live
    # sessions); a lock holder that does not answer HTTP is reported, nothing is deleted
    with home_lock(beamclaw_home):
        refused = run_cli("sessions", "delete", sid, "--yes")
    assert refused.returncode == 1
    _one_line_error(refused.stderr, "does not answer")

    deleted = run_cli("sessions", "delete", sid, "--yes")
    assert deleted.returncode == 0, deleted.stderr
    missing = run_cli("sessions", "show", sid)
    assert missing.returncode == 1
    _one_line_error(missing.stderr, "no session")


def _skill(home: Path, name: str, install: str, requires: str = "") -> None:
    d = home / "skills" / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: A test skill called {name}\n"
        f"metadata:\n  requires:\n    bins: [{requires}]\n  install:\n{install}"
        f"---\n# {name}\nUse {{baseDir}}/run.sh\n"
    )


def _fake_npm(bin_dir: Path, exit_code: int) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    npm = bin_dir / "npm"
    npm.write_text(f'#!/bin/sh\necho "fake npm $*"\nexit {exit_code}\n')
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)


def test_skills_list_status_show_install(run_cli: Run, beamclaw_home: Path) -> None:
    _skill(
        beamclaw_home,
        "widget",
        "    - {kind: npm, package: widget-cli}\n",
        requires="widget-cli-binary-that-does-not-exist",
    )
    listed = run_cli("skills", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    skills = {s["name"]: s for s in json.loads(listed.stdout)}
    assert {"git", "json-wrangling", "memory-keeper", "widget"} <= set(skills)
    assert skills["widget"]["source"] == "global"
    assert skills["widget"]["eligible"] is False
    assert "missing programs" in skills["widget"]["reasons"][0]

    status = run_cli("skills", "status")
    assert "[warn] widget: missing programs" in status.stdout

    shown = run_cli("skills", "show", "widget")
    assert shown.returncode == 0, shown.stderr
    assert "install [npm]: npm widget-cli" in shown.stdout
    assert f"Use {beamclaw_home / 'skills' / 'widget'}/run.sh" in shown.stdout

    unknown = run_cli("skills", "show", "nope")
    assert unknown.returncode == 1
    _one_line_error(unknown.stderr, "no skill 'nope'")

    # install runs the real command found on PATH (a fake npm here)
    bin_dir = beamclaw_home.parent / "bin"
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    _fake_npm(bin_dir, 0)
    ok = run_cli("skills", "install", "widget", env={"PATH": path})
    assert ok.returncode == 0, ok.stderr
    assert "skill widget: installed" in ok.stdout
    assert "still not eligible" in ok.stdout  # the fake npm installed nothing real

    _fake_npm(bin_dir, 3)
    failed = run_cli("skills", "install", "widget", "--json", env={"PATH": path})
    assert failed.returncode == 1
    report = json.loads(failed.stdout)
    assert report["ok"] is False
    assert report["attempts"][0]["exit_status"] == 3
    assert "fake npm install -g widget-cli" in report["attempts"][0]["output"]


def test_tui_needs_a_terminal_and_bare_beamclaw_prints_help(run_cli: Run) -> None:
    tui = run_cli("tui", input="")
    assert tui.returncode == 2
    _one_line_error(tui.stderr, "needs a terminal")
    bad = run_cli("tui", "--backend", "carrier-pigeon", input="")
    assert bad.returncode == 2
    _one_line_error(bad.stderr, "--backend")
    bare = run_cli(input="")
    assert bare.returncode == 0, bare.stderr
    assert "Usage: beamclaw" in bare.stdout
    for command in ("tui", "sessions", "skills"):
        assert command in bare.stdout


def test_completion_script_and_colourless_pipes(run_cli: Run) -> None:
    completion = run_cli("--show-completion", "bash")
    assert completion.returncode == 0, completion.stderr
    assert "_beamclaw_completion" in completion.stdout
    assert "complete " in completion.stdout
    listed = run_cli("skills", "list")
    assert "\x1b[" not in listed.stdout + listed.stderr  # no colour codes when piped
