"""Telegram answering 429 and 5xx, a long poll that hangs, a token Telegram rejects."""

from __future__ import annotations

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_obs import Secret

from .telegram_support import telegram_gateway


async def test_429_waits_retry_after_and_5xx_backs_off() -> None:
    provider = ScriptedProvider([Reply("after 429"), Reply("after 502")])
    async with (
        FakeBotApi() as tg,
        telegram_gateway(provider, tg, edit_interval_seconds=60) as bench,
    ):
        tg.fail_next("sendMessage", 429, retry_after=1)
        tg.push_message(chat_id=21, from_id=21, text="one")
        await bench.shows(21, "after 429")
        limited, sent = tg.calls_of("sendMessage")[-2:]
        assert limited.status == 429 and sent.status == 200
        assert sent.at - limited.at >= 0.95, "waited retry_after"
        tg.fail_next("sendMessage", 502, times=2)
        tg.push_message(chat_id=21, from_id=21, text="two")
        await bench.shows(21, "after 502")
        statuses = [c.status for c in tg.calls_of("sendMessage")[-3:]]
        assert statuses == [502, 502, 200]
        assert bench.channel.status.updates == 2


async def test_the_watchdog_restarts_a_long_poll_that_hangs() -> None:
    provider = ScriptedProvider([Reply("I'm back")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.hang_get_updates()
        tg.push_message(chat_id=22, from_id=22, text="hello?")
        await tg.wait_for(lambda _tg: bench.channel.status.restarts >= 1, 10)
        async with bench.client() as client:
            health = (await client.get("/health")).json()["components"]["channels"]["telegram"]
        assert health["watchdog_restarts"] >= 1
        assert "no poll progress" in health["error"]
        tg.release_get_updates()
        await bench.shows(22, "I'm back")


async def test_a_rejected_token_shows_in_health_and_the_gateway_keeps_serving() -> None:
    async with FakeBotApi() as tg:
        tg.reject_token()
        async with telegram_gateway(ScriptedProvider([]), tg, wait_ready=False) as bench:
            await tg.wait_for(lambda _tg: bench.channel.status.state == "token_rejected", 10)
            async with bench.client() as client:
                health = await client.get("/health")
                ready = await client.get("/ready")
                channels = health.json()["components"]["channels"]
            assert channels["status"] == "degraded"
            assert channels["telegram"]["status"] == "down"
            assert "rejected the bot token" in channels["telegram"]["detail"]
            assert ready.status_code == 200, "the rest of the gateway is unaffected"


async def test_a_missing_token_variable_is_reported_not_fatal() -> None:
    async with (
        FakeBotApi() as tg,
        telegram_gateway(
            ScriptedProvider([]), tg, wait_ready=False, token=Secret.from_env("TELEGRAM_BOT_TOKEN")
        ) as bench,
    ):
        await tg.wait_for(lambda _tg: bench.channel.status.state == "token_missing", 10)
        async with bench.client() as client:
            channels = (await client.get("/health")).json()["components"]["channels"]
            assert (await client.get("/ready")).status_code == 200
        assert channels["telegram"]["status"] == "down"
        assert "TELEGRAM_BOT_TOKEN" in channels["telegram"]["detail"]
        assert not tg.calls, "nothing was sent without a token"
