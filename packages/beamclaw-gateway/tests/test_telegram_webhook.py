"""Webhook mode: ``setWebhook`` with a secret, ``/webhook/telegram`` checks it on every
request, a redelivered update is answered once, the name is reserved."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_gateway.settings import GatewaySettings
from beamclaw_obs import Secret

from .telegram_support import telegram_gateway

URL = "https://bot.example.com/webhook/telegram"
HEADER = "X-Telegram-Bot-Api-Secret-Token"


async def test_webhook_updates_need_the_secret_and_are_answered_once() -> None:
    provider = ScriptedProvider([Reply("via webhook")])
    async with (
        FakeBotApi() as tg,
        telegram_gateway(
            provider,
            tg,
            mode="webhook",
            webhook_url=URL,
            webhook_secret=Secret.model_validate("s3cret-token"),
        ) as bench,
    ):
        hook = tg.webhook
        assert hook is not None and hook.url == URL and hook.secret_token == "s3cret-token"
        assert not tg.calls_of("getUpdates"), "no polling in webhook mode"
        tg.push_message(chat_id=41, from_id=41, text="hook me")
        update = tg.pending_updates[-1]
        async with bench.client() as client:
            forged = await client.post("/webhook/telegram", json=update, headers={HEADER: "nope"})
            missing = await client.post("/webhook/telegram", json=update)
            assert forged.status_code == 401 and missing.status_code == 401
            assert bench.channel.status.updates == 0
            ok = await client.post(
                "/webhook/telegram", json=update, headers={HEADER: "s3cret-token"}
            )
            assert ok.status_code == 200, ok.text
            await bench.shows(41, "via webhook")
            again = await client.post(
                "/webhook/telegram", json=update, headers={HEADER: "s3cret-token"}
            )
            assert again.status_code == 200, "Telegram's redelivery is accepted…"
            await asyncio.sleep(0.5)
            assert len(bench.bot_messages(41)) == 1, "…and not answered again"
            junk = await client.post(
                "/webhook/telegram", content=b"[1, 2]", headers={HEADER: "s3cret-token"}
            )
            assert junk.status_code == 400
        assert len(provider.calls) == 1


async def test_without_webhook_mode_the_route_is_404() -> None:
    async with FakeBotApi() as tg, telegram_gateway(ScriptedProvider([]), tg) as bench:
        async with bench.client() as client:
            r = await client.post("/webhook/telegram", json={}, headers={HEADER: "x"})
        assert r.status_code == 404


def test_telegram_is_not_a_generic_webhook_source() -> None:
    with pytest.raises(ValueError, match="reserved"):
        GatewaySettings.model_validate({"webhooks": {"telegram": {"secret": "x"}}})
