"""Who the Telegram bot answers: pairing codes approved over REST, the allowlist, groups."""

from __future__ import annotations

import re

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_gateway.telegram.pairing import ALPHABET, CODE_LENGTH

from .telegram_support import telegram_gateway

CODE = re.compile(rf"pair telegram ([{ALPHABET}]{{{CODE_LENGTH}}})")


async def test_a_stranger_pairs_and_is_approved_over_rest() -> None:
    provider = ScriptedProvider([Reply("welcome, Ann")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg, dm_policy="pairing") as bench:
        tg.push_message(chat_id=100, from_id=100, text="hello?", username="ann")
        first = await bench.shows(100, "beamclaw pair telegram")
        tg.push_message(chat_id=100, from_id=100, text="hello again")
        await bench.tg.wait_for(lambda _tg: len(bench.bot_messages(100)) == 2, 10)
        second = bench.bot_messages(100)[1]
        code = CODE.search(first.plain_text)
        assert code is not None, first.plain_text
        assert CODE.search(second.plain_text) is not None
        assert CODE.search(second.plain_text).group(1) == code.group(1), "same person, same code"  # pyright: ignore[reportOptionalMemberAccess]
        assert provider.calls == [], "a stranger never reaches the model"
        async with bench.client() as client:
            listed = (await client.get("/api/pairing/telegram")).json()
            assert [p["code"] for p in listed["pending"]] == [code.group(1)]
            wrong = await client.post("/api/pairing/telegram", json={"code": "ZZZZZZZZ"})
            assert wrong.status_code == 404
            ok = await client.post(
                "/api/pairing/telegram", json={"code": code.group(1).lower(), "person": "ann"}
            )
            assert ok.status_code == 200, ok.text
            assert ok.json()["user_id"] == 100
            await bench.shows(100, "You're approved")
            links = (await client.get("/api/identities")).json()["links"]
            assert [(x["account"], x["person"]) for x in links] == [("tg:100", "ann")]
            again = await client.post("/api/pairing/telegram", json={"code": code.group(1)})
            assert again.status_code == 404, "a code is used once"
        tg.push_message(chat_id=100, from_id=100, text="now?", username="ann")
        await bench.shows(100, "welcome, Ann")
        assert provider.calls[0].messages[-1].text == "now?"
        async with bench.client() as client:
            gone = await client.delete("/api/pairing/telegram/@ann")
            assert gone.json() == {"removed": "approved"}
        tg.push_message(chat_id=100, from_id=100, text="still there?", username="ann")
        await bench.tg.wait_for(
            lambda _tg: sum("pair telegram" in m.plain_text for m in bench.bot_messages(100)) == 3,
            10,
        )
        assert len(provider.calls) == 1


async def test_at_most_three_codes_are_pending() -> None:
    async with (
        FakeBotApi() as tg,
        telegram_gateway(ScriptedProvider([]), tg, dm_policy="pairing") as bench,
    ):
        for user in (1, 2, 3, 4):
            tg.push_message(chat_id=user, from_id=user, text="hi")
        for user in (1, 2, 3):
            await bench.shows(user, "pair telegram")
        await bench.shows(4, "too many people are waiting")


async def test_allowlist_answers_listed_users_and_refuses_others() -> None:
    provider = ScriptedProvider([Reply("hi friend")])
    async with (
        FakeBotApi() as tg,
        telegram_gateway(provider, tg, dm_policy="allowlist", allowlist=["@friend"]) as bench,
    ):
        tg.push_message(chat_id=201, from_id=201, text="let me in")
        await bench.shows(201, "only talks to people its owner let in")
        tg.push_message(chat_id=202, from_id=202, text="hello", username="Friend")
        await bench.shows(202, "hi friend")
        assert len(provider.calls) == 1


async def test_groups_are_answered_only_when_mentioned_each_its_own_session() -> None:
    provider = ScriptedProvider([Reply("group answer")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.add_chat(-500, "group", title="team")
        tg.push_message(chat_id=-500, from_id=7, text="chatting among us", chat_type="group")
        tg.push_message(
            chat_id=-500, from_id=7, text=f"@{tg.bot_username} what now?", chat_type="group"
        )
        await bench.shows(-500, "group answer")
        assert len(provider.calls) == 1
        assert provider.calls[0].messages[-1].text == "what now?"
        sessions = await bench.gw.runtime.core.list_sessions()
        assert [s.user_id for s in sessions] == ["tg:group:-500"]
