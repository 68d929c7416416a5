"""``beamclaw identity link|unlink|list``: on the database without a daemon, through the
gateway's ``/api/identities`` while one runs (so its sessions see the link at once)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from beamclaw_cli.app import main
from beamclaw_cli.daemon import home_lock
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.testing import live_gateway

from .conftest import Run


async def beamclaw(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_link_list_unlink_without_a_gateway(
    run_cli: Run, beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no linked accounts" in (await beamclaw(capsys, "identity", "list"))[1]
    code, out, err = await beamclaw(capsys, "identity", "link", "local:ann", "ann")
    assert code == 0, err
    assert out.strip() == "linked local:ann to ann (sessions of ann)"
    assert (await beamclaw(capsys, "identity", "link", "api:ann", "ann"))[0] == 0
    installed = run_cli("identity", "list", "--json")  # the real script, once
    assert installed.returncode == 0, installed.stderr
    assert [(x["account"], x["person"]) for x in json.loads(installed.stdout)] == [
        ("api:ann", "ann"),
        ("local:ann", "ann"),
    ]
    moved = await beamclaw(capsys, "identity", "link", "api:ann", "bob")
    assert moved[0] == 1 and "unlink it first" in moved[2]
    assert (await beamclaw(capsys, "identity", "unlink", "api:ann"))[1].strip() == (
        "unlinked api:ann from ann"
    )
    missing = await beamclaw(capsys, "identity", "unlink", "api:ann")
    assert missing[0] == 1 and "not linked" in missing[2]


async def test_link_through_a_running_gateway(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two")])
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        monkeypatch.setenv("BEAMCLAW_PORT", str(gw.port))
        with home_lock(beamclaw_home):
            for account in ("api:ann", "api:annie"):
                code, _out, err = await beamclaw(capsys, "identity", "link", account, "ann")
                assert code == 0, err
        body = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "hi"}]}
        for user in ("ann", "annie"):
            r = await c.post("/v1/chat/completions", json=body, headers={"X-User-Id": user})
            assert r.status_code == 200
        sessions = (await c.get("/api/sessions")).json()["sessions"]
    assert len(sessions) == 1, "both accounts spoke to the person's one session"
