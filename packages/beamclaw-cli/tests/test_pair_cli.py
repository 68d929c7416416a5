"""``beamclaw pair telegram CODE|list|revoke``: on the database while no gateway runs,
through ``/api/pairing/telegram`` while one does (the bot then tells the person at once).
A real gateway with the Telegram channel talks to the fake Bot API over HTTP."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from beamclaw_cli.app import main
from beamclaw_cli.daemon import home_lock
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_gateway.settings import TelegramSettings
from beamclaw_gateway.testing import LiveGateway, live_gateway, quiet_config
from beamclaw_obs import Secret

CODE = re.compile(r"pair telegram ([A-Z0-9]{8})")


async def beamclaw(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _config(tg: FakeBotApi):
    config = quiet_config()
    config.gateway.channels.telegram = TelegramSettings(
        enabled=True,
        token=Secret.model_validate(tg.token),
        api_base_url=tg.base_url,
        dm_policy="pairing",
        poll_timeout_seconds=1,
    )
    return config


async def _texts(tg: FakeBotApi, chat: int, part: str, count: int = 1) -> list[str]:
    def shown() -> list[str]:
        return [m.plain_text for m in tg.messages(chat) if part in m.plain_text]

    await tg.wait_for(lambda _tg: len(shown()) >= count, 10)
    return shown()


async def _ready(gw: LiveGateway, tg: FakeBotApi) -> None:
    channel = gw.app.state.services.telegram
    await tg.wait_for(lambda _tg: channel.ready.is_set(), 10)


async def test_pair_on_the_database_then_the_person_is_answered(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider = ScriptedProvider([Reply("hello Ann")])
    async with FakeBotApi() as tg:
        async with live_gateway(provider, _config(tg)) as gw:
            await _ready(gw, tg)
            tg.push_message(chat_id=77, from_id=77, text="hi", username="ann")
            (text,) = await _texts(tg, 77, "pair telegram")
        found = CODE.search(text)
        assert found is not None
        code, out, err = await beamclaw(capsys, "pair", "list")
        assert code == 0, err
        assert found.group(1) in out and "@ann" in out
        code, out, err = await beamclaw(
            capsys, "pair", "telegram", found.group(1), "--person", "ann"
        )
        assert code == 0, err
        assert out.strip() == "approved Telegram user @ann as ann"
        code, _out, err = await beamclaw(capsys, "pair", "telegram", found.group(1))
        assert code == 1 and "no pending Telegram pairing" in err
        async with live_gateway(provider, _config(tg)) as gw:
            await _ready(gw, tg)
            tg.push_message(chat_id=77, from_id=77, text="am I in?", username="ann")
            await _texts(tg, 77, "hello Ann")
            links = await gw.runtime.core.identities.list()
            assert [(x.account, x.person_id) for x in links] == [("tg:77", "ann")]
        code, out, err = await beamclaw(capsys, "pair", "revoke", "77")
        assert code == 0, err
        assert out.strip() == "revoked 77 (approved)"


async def test_pair_through_a_running_gateway(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeBotApi() as tg, live_gateway(ScriptedProvider([]), _config(tg)) as gw:
        await _ready(gw, tg)
        monkeypatch.setenv("BEAMCLAW_PORT", str(gw.port))
        tg.push_message(chat_id=88, from_id=88, text="hi")
        (text,) = await _texts(tg, 88, "pair telegram")
        found = CODE.search(text)
        assert found is not None
        with home_lock(beamclaw_home):
            code, out, err = await beamclaw(capsys, "pair", "telegram", found.group(1))
            assert code == 0, err
            assert out.strip() == "approved Telegram user 88"
            await _texts(tg, 88, "You're approved")
            code, out, err = await beamclaw(capsys, "pair", "list", "--json")
            assert code == 0, err
            assert '"user_id": 88' in out
            code, out, err = await beamclaw(capsys, "status")
            assert code == 0, err
            line = next(x for x in out.splitlines() if x.strip().startswith("telegram"))
            assert "up/running" in line and "state=polling" in line and "updates=1" in line


async def test_doctor_checks_the_bot_token_with_telegram(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with FakeBotApi() as tg:
        beamclaw_home.mkdir(parents=True, exist_ok=True)
        (beamclaw_home / "beamclaw.toml").write_text(
            "[gateway.channels.telegram]\nenabled = true\n"
            f'token = "{tg.token}"\napi_base_url = "{tg.base_url}"\n'
        )
        _code, out, _err = await beamclaw(capsys, "doctor")
        assert f"[ok] telegram: bot @{tg.bot_username}" in out.replace("  ", " ")
        tg.reject_token()
        _code, out, _err = await beamclaw(capsys, "doctor")
        assert "Telegram rejected the bot token" in out
