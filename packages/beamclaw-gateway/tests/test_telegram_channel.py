"""The Telegram channel through the real gateway, against the fake Bot API over HTTP:
text in and out, typing and drafts, Markdown as HTML, health, commands."""

from __future__ import annotations

import httpx

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi

from .telegram_support import telegram_gateway


async def test_a_message_is_answered_in_html_as_a_reply_after_typing() -> None:
    provider = ScriptedProvider([Reply("Hello **Ann**, here is `code`.")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        user = tg.push_message(chat_id=42, from_id=42, text="hi there", username="ann")
        answer = await bench.shows(42, "Hello Ann, here is code.")
        assert answer.reply_to_message_id == user["message_id"]
        kinds = {e["type"] for e in answer.entities}
        assert {"bold", "code"} <= kinds
        assert tg.calls_of("sendChatAction"), "typing is shown at once"
        assert tg.calls_of("deleteWebhook") and tg.calls_of("setMyCommands")
        names = [c["command"] for c in tg.commands()]
        assert {"start", "new", "stop", "yes", "no", "always"} <= set(names)
        seen = provider.calls[0].messages[-1]
        assert seen.text == "hi there"
        async with bench.client() as client:
            health = (await client.get("/health")).json()
        tg_health = health["components"]["channels"]["telegram"]
        assert tg_health["state"] == "polling"
        assert tg_health["bot"] == f"@{tg.bot_username}"
        assert tg_health["updates"] == 1


async def test_a_long_answer_is_split_in_balanced_chunks() -> None:
    body = "**" + "x" * 5000 + "** and `tail`"
    provider = ScriptedProvider([Reply(body)])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_message(chat_id=8, from_id=8, text="long please")

        def finished() -> bool:
            sent = bench.bot_messages(8)
            return len(sent) == 2 and sent[1].plain_text.endswith("and tail")

        await tg.wait_for(lambda _tg: finished(), 10)
        first, second = bench.bot_messages(8)
        assert first.entities[0]["type"] == "bold" and second.entities[0]["type"] == "bold"
        assert (first.plain_text + second.plain_text).startswith("x" * 5000)
        assert second.plain_text.endswith("and tail")


async def test_html_telegram_refuses_is_sent_again_as_plain_text() -> None:
    provider = ScriptedProvider([Reply("a **b** c")])
    async with (
        FakeBotApi() as tg,
        telegram_gateway(provider, tg, edit_interval_seconds=60) as bench,
    ):
        refused = "Bad Request: can't parse entities"
        tg.fail_next("sendMessage", 400, description=refused)
        tg.push_message(chat_id=9, from_id=9, text="go")
        answer = await bench.shows(9, "a b c")
        assert answer.parse_mode is None and not answer.entities
        html, plain = tg.calls_of("sendMessage")[-2:]
        assert html.status == 400 and html.params["parse_mode"] == "HTML"
        assert plain.status == 200 and "parse_mode" not in plain.params


async def test_commands_and_start() -> None:
    provider = ScriptedProvider([])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_message(chat_id=5, from_id=5, text="/start")
        await bench.shows(5, "BeamClaw agent")
        tg.push_message(chat_id=5, from_id=5, text="/status")
        await bench.shows(5, "Session")
        assert provider.calls == [], "neither reached the model"


async def test_an_edited_message_is_not_answered_again() -> None:
    provider = ScriptedProvider([Reply("first answer")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        user = tg.push_message(chat_id=6, from_id=6, text="hello")
        await bench.shows(6, "first answer")
        tg.push_edited_message(6, 6, user["message_id"], "hello (edited)")
        await tg.wait_for(lambda _tg: bench.channel.status.updates == 2, 5)
        async with httpx.AsyncClient(base_url=bench.gw.base_url) as client:
            assert (await client.get("/health")).status_code == 200
        assert len(bench.bot_messages(6)) == 1
        assert len(provider.calls) == 1
