"""``beamclaw integrations list|connect|revoke`` against the fake services over HTTP."""

from __future__ import annotations

import asyncio
import io
import json
import stat
from pathlib import Path

import pytest

from beamclaw_cli.app import main
from beamclaw_obs import beamclaw_home
from beamclaw_tools.integrations.testing import FakeIntegrationsServer

SLACK_TOKEN = "xoxp-fake-slack-token-0123456789"


async def beamclaw(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _write_config(fake: FakeIntegrationsServer) -> Path:
    base = fake.base_url
    google = fake.data.google
    path = beamclaw_home() / "beamclaw.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"""
[tools.integrations]
enabled = true
redirect_base_url = "http://127.0.0.1:18899"
[tools.integrations.google]
client_id = "{google.client_id}"
client_secret = "{google.client_secret}"
auth_url = "{base}/oauth/authorize"
token_url = "{base}/oauth/token"
revoke_url = "{base}/oauth/revoke"
[tools.integrations.slack]
base_url = "{base}/slack/api"
[tools.integrations.notion]
base_url = "{base}/notion/v1"
""",
        encoding="utf-8",
    )
    return path


async def test_connect_list_and_revoke_a_pasted_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeIntegrationsServer() as fake:
        _write_config(fake)
        monkeypatch.setattr("sys.stdin", io.StringIO(SLACK_TOKEN + "\n"))
        code, out, err = await beamclaw(capsys, "integrations", "connect", "slack")
        assert code == 0, err
        assert "slack connected (anna @ Acme)" in out
        assert "api.slack.com/apps" in err
        assert SLACK_TOKEN not in out + err

        code, out, _ = await beamclaw(capsys, "integrations", "list", "--json")
        rows = {r["service"]: r for r in json.loads(out)}
        assert rows["slack"]["connected"] and rows["slack"]["account"] == "anna @ Acme"
        assert not rows["google"]["connected"]
        store = beamclaw_home() / "integrations" / "tokens.enc"
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
        assert SLACK_TOKEN.encode() not in store.read_bytes()

        code, out, _ = await beamclaw(capsys, "integrations", "revoke", "slack")
        assert code == 0 and "slack disconnected; slack confirmed the revocation" in out
        assert SLACK_TOKEN in fake.data.slack_revoked
        code, out, _ = await beamclaw(capsys, "integrations", "list")
        assert "slack    not connected" in out


async def test_a_wrong_token_is_refused_and_not_stored(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeIntegrationsServer() as fake:
        _write_config(fake)
        monkeypatch.setattr("sys.stdin", io.StringIO("ntn_not_a_real_token_000000\n"))
        code, out, err = await beamclaw(capsys, "integrations", "connect", "notion")
        assert code != 0
        assert "notion refused the stored token" in err and "reconnect" in err
        code, out, _ = await beamclaw(capsys, "integrations", "list")
        assert "notion   not connected" in out


async def test_connect_google_prints_the_consent_link(capsys: pytest.CaptureFixture[str]) -> None:
    async with FakeIntegrationsServer() as fake:
        _write_config(fake)
        code, out, err = await beamclaw(capsys, "integrations", "connect", "calendar")
    assert code == 0, err
    assert f"{fake.base_url}/oauth/authorize?" in out
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A18899%2Fintegrations%2Fgoogle%2Fcallback" in out
    assert "must be running and reachable at http://127.0.0.1:18899" in out


async def test_integrations_off_says_how_to_enable(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = await beamclaw(capsys, "integrations", "list")
    assert code != 0 and "[tools.integrations] enabled = true" in err
