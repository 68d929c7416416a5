"""``beamclaw ui``: the running gateway's web page address, signed in with the token in
the fragment; ``--open`` hands it to the browser ($BROWSER is the seam)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import httpx
import pytest

from beamclaw_cli.app import main
from beamclaw_cli.commands.ui import ui_url
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway import load_config
from beamclaw_gateway.testing import live_gateway, quiet_config

from .conftest import free_port

TOKEN = "ui-cli-token/with #odd chars"


def test_the_token_goes_in_the_fragment_encoded() -> None:
    assert ui_url("http://127.0.0.1:18800", None) == "http://127.0.0.1:18800/ui/"
    assert (
        ui_url("http://127.0.0.1:18800/", TOKEN)
        == "http://127.0.0.1:18800/ui/#token=ui-cli-token%2Fwith%20%23odd%20chars"
    )


async def _beamclaw(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_ui_prints_and_opens_the_signed_in_page(
    beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text(
        '[gateway.http]\ntoken = { env = "BEAMCLAW_GATEWAY_TOKEN" }\n'
    )
    monkeypatch.setenv("BEAMCLAW_GATEWAY_TOKEN", TOKEN)
    opened = beamclaw_home / "opened.txt"
    browser = beamclaw_home / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{opened}"\n')
    browser.chmod(browser.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("BROWSER", str(browser))
    config = quiet_config()
    config.gateway.http.token = load_config(None).settings.gateway.http.token
    async with live_gateway(ScriptedProvider([Reply("hi")]), config) as gw:
        monkeypatch.setenv("BEAMCLAW_PORT", str(gw.port))
        code, out, err = await _beamclaw(capsys, "ui", "--open")
        async with httpx.AsyncClient() as client:
            page = await client.get(out.strip().split("#")[0])
    url = f"http://127.0.0.1:{gw.port}/ui/#token=ui-cli-token%2Fwith%20%23odd%20chars"
    assert code == 0, err
    assert out.strip() == url
    assert err == ""
    assert page.status_code == 200
    assert opened.read_text() == url


async def test_ui_without_a_gateway_says_so_and_still_prints(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    monkeypatch.setenv("BEAMCLAW_PORT", str(port))
    code, out, err = await _beamclaw(capsys, "ui")
    assert code == 0
    assert out.strip() == f"http://127.0.0.1:{port}/ui/"
    assert "no gateway answers" in err
