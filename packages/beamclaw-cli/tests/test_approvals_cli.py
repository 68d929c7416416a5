"""``beamclaw approvals list|revoke``: straight to the database without a daemon, through
the gateway's API while one runs.

Most calls go through :func:`beamclaw_cli.app.main` in a worker thread (the entry point
the ``beamclaw`` script calls, minus the seconds each new process spends importing the
gateway); one runs the installed script itself."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from beamclaw_cli.app import main
from beamclaw_cli.daemon import home_lock
from beamclaw_core import CoreSettings
from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, TurnDone
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, EchoTool, Reply, ScriptedProvider
from beamclaw_gateway.testing import live_gateway
from beamclaw_memory import Database, resolve_database_url
from beamclaw_obs import beamclaw_home
from beamclaw_tools import Autonomy, ToolRegistry

from .conftest import Run

ANN = SessionAddress("local:ann", "default", "tui")


async def _grant(tool: str) -> None:
    """``/always`` for ``tool`` in a real core on $BEAMCLAW_HOME's database."""
    registry = ToolRegistry()
    registry.register(EchoTool(tool, approval=True))
    database = Database(resolve_database_url(None, beamclaw_home()))
    core = Core.create(
        CoreSettings(autonomy_level=Autonomy.SUPERVISED),
        database,
        provider=ScriptedProvider([CallTool(tool, {"text": "x"}), Reply("done")]),
        tools=registry,
        system_prompt="test",
    )
    await core.start(maintenance=False)
    try:
        handle = await core.send(ANN, f"use {tool}")
        async for event in handle.events():
            if isinstance(event, ApprovalRequested):
                await core.answer_approval(handle.session_id, event.request_id, "always")
            if isinstance(event, TurnDone):
                break
    finally:
        await core.stop()
        await database.dispose()


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str


async def beamclaw(capsys: pytest.CaptureFixture[str], *args: str) -> Outcome:
    """``beamclaw ARGS`` in this process (a worker thread: it runs its own event loop)."""
    capsys.readouterr()
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def _one_line_error(stderr: str, fragment: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], stderr


async def test_list_and_revoke_without_a_gateway(
    run_cli: Run, beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no standing approvals" in (await beamclaw(capsys, "approvals", "list")).stdout
    await _grant("write")
    await _grant("edit")
    installed = run_cli("approvals", "list", "--json")  # the real script, once
    assert installed.returncode == 0, installed.stderr
    listed = json.loads(installed.stdout)
    assert [(g["agent_id"], g["user_id"], g["tool"]) for g in listed] == [
        ("default", "local:ann", "edit"),
        ("default", "local:ann", "write"),
    ]
    assert all(g["session_id"] and g["granted_at"] > 0 for g in listed)
    table = (await beamclaw(capsys, "approvals", "list", "--user", "local:ann")).stdout
    assert "local:ann" in table and "write" in table and "edit" in table
    other = await beamclaw(capsys, "approvals", "list", "--json", "--agent", "other")
    assert json.loads(other.stdout) == []

    usage = await beamclaw(capsys, "approvals", "revoke", "default", "local:ann")
    assert usage.returncode == 2
    _one_line_error(usage.stderr, "--all")

    # a lock holder that does not answer HTTP is reported, nothing is revoked
    with home_lock(beamclaw_home):
        refused = await beamclaw(capsys, "approvals", "revoke", "default", "local:ann", "write")
    assert refused.returncode == 1
    _one_line_error(refused.stderr, "does not answer")

    revoked = await beamclaw(capsys, "approvals", "revoke", "default", "local:ann", "write")
    assert revoked.returncode == 0, revoked.stderr
    assert "revoked 1 standing approval of local:ann for default" in revoked.stdout
    again = await beamclaw(capsys, "approvals", "revoke", "default", "local:ann", "write")
    assert again.returncode == 1
    _one_line_error(again.stderr, "no standing approval")
    left = json.loads((await beamclaw(capsys, "approvals", "list", "--json")).stdout)
    assert [g["tool"] for g in left] == ["edit"]
    everything = await beamclaw(capsys, "approvals", "revoke", "default", "local:ann", "--all")
    assert everything.returncode == 0 and "revoked 1 " in everything.stdout
    assert "no standing approvals" in (await beamclaw(capsys, "approvals", "list")).stdout


async def _frames_until(ws: ClientConnection, *types: str) -> dict[str, Any]:
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if frame["type"] in types:
            return frame


async def _write_asks(ws: ClientConnection, answer: str) -> bool:
    await ws.send(json.dumps({"type": "message", "text": "write", "user": "cy"}))
    frame = await _frames_until(ws, "approval_requested", "turn_done", "turn_error")
    if frame["type"] != "approval_requested":
        return False
    decision = {"session_id": frame["session_id"], "request_id": frame["request_id"]}
    await ws.send(json.dumps({"type": "approval", **decision, "decision": answer}))
    await _frames_until(ws, "turn_done", "turn_error")
    return True


async def test_revoke_goes_through_a_running_gateway(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = ScriptedProvider(
        [CallTool("write_file", {"path": "n.txt", "content": "x"}), Reply("ok")] * 4
    )
    async with live_gateway(provider) as gw, websockets.connect(gw.ws_url) as ws:
        await _frames_until(ws, "authenticated")
        assert await _write_asks(ws, "always")
        assert not await _write_asks(ws, "no"), "granted: not asked"
        [grant] = json.loads((await beamclaw(capsys, "approvals", "list", "--json")).stdout)
        monkeypatch.setenv("BEAMCLAW_PORT", str(gw.port))
        with home_lock(beamclaw_home):
            revoked = await beamclaw(
                capsys, "approvals", "revoke", "default", grant["user_id"], "write_file"
            )
        assert revoked.returncode == 0, revoked.stderr
        assert await _write_asks(ws, "no"), "the gateway itself forgot the grant"
