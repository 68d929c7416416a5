"""The fake Telegram Bot API, driven by aiogram's own ``Bot`` over real HTTP.

Each test proves one Bot API behaviour the Telegram channel relies on: what aiogram sends
is accepted as sent, and what the fake answers surfaces as the exception aiogram raises
against the real Telegram.
"""

from __future__ import annotations

import asyncio
import struct
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import (
    ClientDecodeError,
    TelegramBadRequest,
    TelegramConflictError,
    TelegramForbiddenError,
    TelegramRetryAfter,
    TelegramServerError,
    TelegramUnauthorizedError,
)
from aiogram.types import (
    BotCommand,
    BufferedInputFile,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    KeyboardButton,
    Message,
    ReplyKeyboardMarkup,
    ReplyParameters,
)
from aiogram.webhook.aiohttp_server import SimpleRequestHandler
from aiohttp import web

from beamclaw_gateway.fake_telegram import FakeBotApi, parse_html

TOKEN = "123456:TEST"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + struct.pack(">II", 640, 480) + b"rest"


class QuickCloseSession(AiohttpSession):
    """aiogram's session minus the 250 ms pause its ``close`` takes for TLS shutdown (the
    fake speaks plain HTTP on loopback)."""

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


def make_bot(tg: FakeBotApi, token: str = TOKEN) -> Bot:
    return Bot(token, session=QuickCloseSession(api=TelegramAPIServer.from_base(tg.base_url)))


@pytest.fixture
async def tg() -> AsyncIterator[FakeBotApi]:
    async with FakeBotApi(token=TOKEN) as fake:
        yield fake


@pytest.fixture
async def bot(tg: FakeBotApi) -> AsyncIterator[Bot]:
    client = make_bot(tg)
    yield client
    await client.session.close()


def keyboard(*data: str) -> InlineKeyboardMarkup:
    buttons = [InlineKeyboardButton(text=d, callback_data=d) for d in data]
    return InlineKeyboardMarkup(inline_keyboard=[buttons])


# -- identity, tokens, unknown methods -----------------------------------------------------


async def test_get_me_answers_the_bot_identity(tg: FakeBotApi, bot: Bot) -> None:
    me = await bot.get_me()
    assert (me.id, me.username, me.is_bot) == (tg.bot_id, tg.bot_username, True)
    assert tg.bot_id == 123456
    assert tg.base_url.startswith("http://127.0.0.1:")
    assert tg.calls[0].method == "getMe" and tg.calls[0].status == 200


async def test_a_wrong_or_rejected_token_is_telegrams_401(tg: FakeBotApi, bot: Bot) -> None:
    stranger = make_bot(tg, "999:WRONG")
    try:
        with pytest.raises(TelegramUnauthorizedError, match="Unauthorized"):
            await stranger.get_me()
    finally:
        await stranger.session.close()
    tg.reject_token(True)
    with pytest.raises(TelegramUnauthorizedError):
        await bot.get_me()
    tg.reject_token(False)
    assert (await bot.get_me()).id == tg.bot_id
    assert [c.status for c in tg.calls] == [401, 401, 200]


async def test_unknown_methods_are_404_and_names_are_case_insensitive(tg: FakeBotApi) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{tg.base_url}/bot{TOKEN}/noSuchMethod") as response:
            assert response.status == 404
            assert await response.json() == {
                "ok": False,
                "error_code": 404,
                "description": "Not Found",
            }
        async with http.get(f"{tg.base_url}/bot{TOKEN}/GETME") as response:
            assert (await response.json())["result"]["id"] == tg.bot_id
    assert [c.method for c in tg.calls] == ["noSuchMethod", "getMe"]


async def test_json_bodies_are_accepted_like_form_bodies(tg: FakeBotApi) -> None:
    tg.add_chat(42)
    body = {"chat_id": 42, "text": "<i>json</i>", "parse_mode": "HTML"}
    url = f"{tg.base_url}/bot{TOKEN}/sendMessage"
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as response:
        answer = await response.json()
    assert answer["ok"] is True
    assert answer["result"]["text"] == "json"
    assert answer["result"]["entities"] == [{"offset": 0, "length": 4, "type": "italic"}]


# -- getUpdates ----------------------------------------------------------------------------


async def test_long_poll_waits_then_wakes_on_a_push(tg: FakeBotApi, bot: Bot) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=10))
    await tg.wait_for(lambda t: t.polling == 1)
    await asyncio.sleep(0.1)
    assert not poll.done()
    started = time.monotonic()
    sent = tg.push_message(chat_id=42, from_id=42, text="hi", username="ann")
    updates = await asyncio.wait_for(poll, 2)
    assert time.monotonic() - started < 1.0
    assert len(updates) == 1
    message = updates[0].message
    assert message is not None and message.from_user is not None
    assert (message.message_id, message.text) == (sent["message_id"], "hi")
    assert (message.chat.id, message.chat.type, message.from_user.username) == (
        42,
        "private",
        "ann",
    )


async def test_long_poll_honours_its_timeout(tg: FakeBotApi, bot: Bot) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=1) == []
    assert 0.9 <= time.monotonic() - started < 2.0
    started = time.monotonic()
    assert await bot.get_updates() == []  # timeout 0: short polling
    assert time.monotonic() - started < 0.5


async def test_offset_confirms_and_drops_earlier_updates(tg: FakeBotApi, bot: Bot) -> None:
    for text in ("one", "two", "three"):
        tg.push_message(chat_id=42, from_id=42, text=text)
    first = await bot.get_updates()
    ids = [u.update_id for u in first]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert [u.update_id for u in await bot.get_updates()] == ids  # unconfirmed: again
    again = await bot.get_updates(offset=ids[1], limit=5)
    assert [u.update_id for u in again] == ids[1:]
    assert [u.update_id for u in await bot.get_updates(offset=ids[2] + 1)] == []
    assert tg.pending_updates == []
    tg.push_message(chat_id=42, from_id=42, text="four")
    assert (await bot.get_updates())[0].update_id == ids[2] + 1


async def test_limit_and_allowed_updates(tg: FakeBotApi, bot: Bot) -> None:
    tg.push_message(chat_id=42, from_id=42, text="a")
    tg.push_message(chat_id=42, from_id=42, text="b")
    assert [u.message.text for u in await bot.get_updates(limit=1) if u.message] == ["a"]
    query = tg.push_callback(chat_id=42, from_id=42, message_id=1, data="x")
    only = await bot.get_updates(allowed_updates=["callback_query"])
    assert [u.callback_query.id for u in only if u.callback_query] == [query["id"]]
    assert len(tg.pending_updates) == 1  # the messages are gone: not allowed
    tg.push_message(chat_id=42, from_id=42, text="c")
    assert len(await bot.get_updates()) == 1  # the setting sticks while not resent


async def test_a_newer_get_updates_terminates_the_pending_one(tg: FakeBotApi, bot: Bot) -> None:
    first = asyncio.create_task(bot.get_updates(timeout=10))
    await tg.wait_for(lambda t: t.polling == 1)
    second = asyncio.create_task(bot.get_updates(timeout=10))
    with pytest.raises(TelegramConflictError, match="terminated by other getUpdates"):
        await asyncio.wait_for(first, 2)
    tg.push_message(chat_id=42, from_id=42, text="for the survivor")
    assert len(await asyncio.wait_for(second, 2)) == 1


async def test_hang_holds_get_updates_until_released(tg: FakeBotApi, bot: Bot) -> None:
    tg.hang_get_updates()
    poll = asyncio.create_task(bot.get_updates())  # a short poll: answers at once, unless held
    call = await tg.wait_call("getUpdates")
    tg.push_message(chat_id=42, from_id=42, text="held")
    await asyncio.sleep(0.3)
    assert not poll.done() and call.status is None and tg.polling == 1
    tg.release_get_updates()
    updates = await asyncio.wait_for(poll, 2)
    assert [u.message.text for u in updates if u.message] == ["held"]
    assert call.status == 200


# -- webhooks ------------------------------------------------------------------------------


async def test_a_webhook_makes_get_updates_409_until_deleted(tg: FakeBotApi, bot: Bot) -> None:
    tg.push_message(chat_id=42, from_id=42, text="queued")
    assert await bot.set_webhook("http://127.0.0.1:9/hook", secret_token="s3cret")
    assert tg.webhook is not None
    assert (tg.webhook.url, tg.webhook.secret_token) == ("http://127.0.0.1:9/hook", "s3cret")
    info = await bot.get_webhook_info()
    assert (info.url, info.pending_update_count) == ("http://127.0.0.1:9/hook", 1)
    with pytest.raises(TelegramConflictError, match="webhook is active"):
        await bot.get_updates()
    assert await bot.delete_webhook(drop_pending_updates=True)
    assert tg.webhook is None
    assert (await bot.get_webhook_info()).url == ""
    assert await bot.get_updates() == []  # the queued update was dropped


async def test_deliver_webhook_posts_with_the_secret_header(tg: FakeBotApi, bot: Bot) -> None:
    received: list[Message] = []
    dispatcher = Dispatcher()

    @dispatcher.message()
    async def on_message(message: Message) -> None:
        received.append(message)

    app = web.Application()
    SimpleRequestHandler(
        dispatcher, bot, secret_token="s3cret", handle_in_background=False
    ).register(app, path="/hook")
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        await bot.set_webhook(f"http://127.0.0.1:{port}/hook", secret_token="s3cret")
        tg.push_message(chat_id=42, from_id=42, text="via webhook")
        assert await tg.deliver_pending() == [200]
        assert [m.text for m in received] == ["via webhook"]
        assert tg.pending_updates == []
        forged = {"update_id": 1, "message": received[0].model_dump(mode="json")}
        assert await tg.deliver_webhook(forged, secret="wrong") == 401
        assert len(received) == 1
    finally:
        await runner.cleanup()


# -- sending and validation ----------------------------------------------------------------


async def test_send_message_records_markup_reply_and_per_chat_ids(tg: FakeBotApi, bot: Bot) -> None:
    asked = tg.push_message(chat_id=42, from_id=42, text="question")
    sent = await bot.send_message(
        42,
        "<b>bold</b> and 😀 <a href='https://x.test/?a=1&amp;b=2'>link</a>",
        parse_mode="HTML",
        reply_markup=keyboard("yes", "no"),
        reply_parameters=ReplyParameters(message_id=asked["message_id"]),
    )
    assert sent.message_id == asked["message_id"] + 1
    assert sent.text == "bold and 😀 link"
    assert sent.reply_to_message is not None
    assert sent.reply_to_message.text == "question"
    assert [(e.type, e.offset, e.length, e.url) for e in sent.entities or []] == [
        ("bold", 0, 4, None),
        ("text_link", 12, 4, "https://x.test/?a=1&b=2"),
    ]
    [record] = tg.messages(42)
    assert record.text == "<b>bold</b> and 😀 <a href='https://x.test/?a=1&amp;b=2'>link</a>"
    assert record.parse_mode == "HTML"
    assert record.plain_text == "bold and 😀 link"
    assert record.reply_to_message_id == asked["message_id"]
    assert record.reply_markup == {
        "inline_keyboard": [
            [{"text": "yes", "callback_data": "yes"}, {"text": "no", "callback_data": "no"}]
        ]
    }
    tg.add_chat(7, "group", title="Team")
    assert (await bot.send_message(7, "first")).message_id == 1
    assert (await bot.send_message(42, "next")).message_id == sent.message_id + 1


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("<b>open", 'Can\'t find end tag corresponding to start tag "b"'),
        ("a <br> b", 'Unsupported start tag "br" at byte offset 2'),
        ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'),
        ("1 < 2", 'Unsupported start tag "" at byte offset 2'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ('<span class="red">x</span>', 'Tag "span" must have class "tg-spoiler"'),
    ],
)
async def test_invalid_html_is_a_bad_request(
    tg: FakeBotApi, bot: Bot, text: str, detail: str
) -> None:
    tg.add_chat(42)
    with pytest.raises(TelegramBadRequest) as caught:
        await bot.send_message(42, text, parse_mode="HTML")
    assert caught.value.message.startswith("Bad Request: can't parse entities: ")
    assert detail in caught.value.message
    assert tg.messages(42) == []
    assert tg.calls[-1].status == 400


async def test_text_limits_and_unknown_chats(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(42, "x" * 4097)
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(42, "😀" * 2049)  # 2049 characters, 4098 UTF-16 units
    assert (
        len((await bot.send_message(42, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")).text or "")
        == 4096
    )
    with pytest.raises(TelegramBadRequest, match="message text is empty"):
        await bot.send_message(42, "")
    with pytest.raises(TelegramBadRequest, match="message text is empty"):
        await bot.send_message(42, "<b> </b>", parse_mode="HTML")
    with pytest.raises(TelegramBadRequest, match="chat not found"):
        await bot.send_message(999, "who?")
    tg.block(42)
    with pytest.raises(TelegramForbiddenError, match="blocked by the user"):
        await bot.send_message(42, "still there?")


async def test_reply_markup_is_validated_and_recorded(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    with pytest.raises(TelegramBadRequest, match="BUTTON_DATA_INVALID"):
        await bot.send_message(42, "pick", reply_markup=keyboard("é" * 33))  # 66 bytes
    assert (await bot.send_message(42, "pick", reply_markup=keyboard("é" * 32))).message_id
    menu = ReplyKeyboardMarkup(keyboard=[[KeyboardButton(text="/new")]], resize_keyboard=True)
    sent = await bot.send_message(42, "menu", reply_markup=menu)
    assert sent.reply_markup is None  # only inline keyboards stay on a message
    assert tg.messages(42)[-1].reply_markup == {
        "keyboard": [[{"text": "/new"}]],
        "resize_keyboard": True,
    }


async def test_edit_message_text_and_its_refusals(tg: FakeBotApi, bot: Bot) -> None:
    asked = tg.push_message(chat_id=42, from_id=42, text="hi")
    sent = await bot.send_message(42, "draft", reply_markup=keyboard("stop"))
    edited = await bot.edit_message_text(
        "<i>final</i>", chat_id=42, message_id=sent.message_id, parse_mode="HTML"
    )
    assert isinstance(edited, Message)
    assert (edited.text, edited.edit_date is not None) == ("final", True)
    assert edited.reply_markup is None  # no reply_markup in the edit: the keyboard goes
    [record] = tg.messages(42)
    assert (record.text, record.sent_text, record.edits) == (
        "<i>final</i>",
        "draft",
        ["<i>final</i>"],
    )
    assert record.reply_markup is None and record.markup_edits == 1
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_text(
            "<i>final</i>", chat_id=42, message_id=sent.message_id, parse_mode="HTML"
        )
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.edit_message_text(
            "<b>x", chat_id=42, message_id=sent.message_id, parse_mode="HTML"
        )
    with pytest.raises(TelegramBadRequest, match="message can't be edited"):
        await bot.edit_message_text("mine now", chat_id=42, message_id=asked["message_id"])
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await bot.edit_message_text("ghost", chat_id=42, message_id=999)
    assert record.edits == ["<i>final</i>"]


async def test_reply_markup_edits_and_deletion(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    sent = await bot.send_message(42, "vote", reply_markup=keyboard("a"))
    await bot.edit_message_reply_markup(
        chat_id=42, message_id=sent.message_id, reply_markup=keyboard("a", "b")
    )
    [record] = tg.messages(42)
    assert record.reply_markup is not None and len(record.reply_markup["inline_keyboard"][0]) == 2
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_reply_markup(
            chat_id=42, message_id=sent.message_id, reply_markup=keyboard("a", "b")
        )
    assert await bot.delete_message(42, sent.message_id)
    assert record.deleted
    with pytest.raises(TelegramBadRequest, match="message to delete not found"):
        await bot.delete_message(42, sent.message_id)
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await bot.edit_message_text("late", chat_id=42, message_id=sent.message_id)


async def test_send_chat_action(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    assert await bot.send_chat_action(42, "typing")
    with pytest.raises(TelegramBadRequest, match="wrong parameter action"):
        await bot.send_chat_action(42, "dancing")
    assert (await tg.wait_call("sendChatAction")).params == {"chat_id": 42, "action": "typing"}


async def test_callback_queries_are_answered_once(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    sent = await bot.send_message(42, "approve?", reply_markup=keyboard("approve:1"))
    query = tg.push_callback(chat_id=42, from_id=42, message_id=sent.message_id, data="approve:1")
    [update] = await bot.get_updates()
    assert update.callback_query is not None
    assert update.callback_query.data == "approve:1"
    assert update.callback_query.message is not None
    assert update.callback_query.message.message_id == sent.message_id
    assert await bot.answer_callback_query(query["id"], text="done")
    assert [(a.callback_query_id, a.text) for a in tg.callback_answers] == [(query["id"], "done")]
    with pytest.raises(TelegramBadRequest, match="query is too old"):
        await bot.answer_callback_query(query["id"])


async def test_edited_messages_arrive_as_edited_message_updates(tg: FakeBotApi, bot: Bot) -> None:
    sent = tg.push_message(chat_id=42, from_id=42, text="/start now")
    tg.push_edited_message(chat_id=42, from_id=42, message_id=sent["message_id"], text="typo")
    first, second = await bot.get_updates()
    assert first.message is not None and first.message.entities is not None
    assert (first.message.entities[0].type, first.message.entities[0].length) == ("bot_command", 6)
    assert second.edited_message is not None
    assert (second.edited_message.message_id, second.edited_message.text) == (
        sent["message_id"],
        "typo",
    )
    assert tg.push_update({"my_chat_member": {}})["update_id"] == second.update_id + 1


async def test_my_commands(tg: FakeBotApi, bot: Bot) -> None:
    commands = [
        BotCommand(command="new", description="Start over"),
        BotCommand(command="stop", description="Stop"),
    ]
    assert await bot.set_my_commands(commands)
    assert [c.command for c in await bot.get_my_commands()] == ["new", "stop"]
    assert tg.commands() == [c.model_dump(exclude_none=True) for c in commands]
    with pytest.raises(TelegramBadRequest, match="BOT_COMMAND_INVALID"):
        await bot.set_my_commands([BotCommand(command="Bad-Name", description="x")])


# -- files ---------------------------------------------------------------------------------


async def test_uploads_are_stored_and_downloadable(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    photo = await bot.send_photo(
        42, BufferedInputFile(PNG, "chart.png"), caption="<b>chart</b>", parse_mode="HTML"
    )
    document = await bot.send_document(42, BufferedInputFile(b"a,b\n1,2\n", "data.csv"))
    assert photo.caption == "chart" and photo.photo is not None
    assert (photo.photo[-1].width, photo.photo[-1].height) == (640, 480)
    assert document.document is not None and document.document.file_name == "data.csv"
    assert document.document.mime_type == "text/csv"
    calls = tg.calls_of("sendPhoto") + tg.calls_of("sendDocument")
    assert [c.files for c in calls] == [{"photo": PNG}, {"document": b"a,b\n1,2\n"}]
    records = tg.messages(42)
    assert (records[0].photo, records[0].caption) == (PNG, "<b>chart</b>")
    assert (records[1].document, records[1].file_name) == (b"a,b\n1,2\n", "data.csv")
    file = await bot.get_file(document.document.file_id)
    assert file.file_path is not None and file.file_size == 8
    downloaded = await bot.download_file(file.file_path)
    assert downloaded is not None and downloaded.read() == b"a,b\n1,2\n"
    assert tg.downloads == [file.file_path]
    with pytest.raises(TelegramBadRequest, match="invalid file_id"):
        await bot.get_file("nope")
    with pytest.raises(TelegramBadRequest, match="message caption is too long"):
        await bot.send_photo(42, BufferedInputFile(PNG, "x.png"), caption="c" * 1025)
    again = await bot.send_document(42, document.document.file_id)  # resent by file_id
    assert again.document is not None and tg.messages(42)[-1].document == b"a,b\n1,2\n"


async def test_pushed_media_can_be_fetched_through_the_base_url(tg: FakeBotApi, bot: Bot) -> None:
    tg.push_photo(chat_id=42, from_id=42, data=PNG, caption="look")
    tg.push_document(
        chat_id=42, from_id=42, data=b"notes", file_name="a.txt", mime_type="text/plain"
    )
    tg.push_voice(chat_id=42, from_id=42, data=b"OggS...", duration=2)
    photo, document, voice = (u.message for u in await bot.get_updates())
    assert photo is not None and photo.photo is not None and photo.caption == "look"
    assert [s.width for s in photo.photo] == [90, 320, 640]
    assert all(s.file_size == len(PNG) for s in photo.photo)
    assert document is not None and document.document is not None
    assert (document.document.file_name, document.document.mime_type) == ("a.txt", "text/plain")
    assert voice is not None and voice.voice is not None and voice.voice.duration == 2
    for file_id, data in [
        (photo.photo[-1].file_id, PNG),
        (document.document.file_id, b"notes"),
        (voice.voice.file_id, b"OggS..."),
    ]:
        file = await bot.get_file(file_id)
        assert file.file_path is not None
        downloaded = await bot.download_file(file.file_path)
        assert downloaded is not None and downloaded.read() == data
    missing = f"{tg.base_url}/file/bot{TOKEN}/photos/none.jpg"
    async with aiohttp.ClientSession() as http, http.get(missing) as response:
        assert response.status == 404


# -- injected faults -----------------------------------------------------------------------


async def test_fail_next_429_is_telegram_retry_after(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    tg.fail_next("sendMessage", status=429, retry_after=3)
    with pytest.raises(TelegramRetryAfter) as caught:
        await bot.send_message(42, "hi")
    assert caught.value.retry_after == 3
    assert "Too Many Requests: retry after 3" in caught.value.message
    assert (await bot.send_message(42, "hi")).text == "hi"  # only the next call failed
    assert [c.status for c in tg.calls_of("sendMessage")] == [429, 200]


async def test_fail_next_400_and_5xx(tg: FakeBotApi, bot: Bot) -> None:
    tg.add_chat(42)
    tg.fail_next("sendMessage", status=400, description="Bad Request: can't parse entities: x")
    with pytest.raises(TelegramBadRequest, match="can't parse entities: x"):
        await bot.send_message(42, "hi")
    tg.fail_next("sendMessage", status=502, times=2)
    for _ in range(2):
        with pytest.raises(TelegramServerError, match="Bad Gateway"):
            await bot.send_message(42, "hi")
    tg.fail_next("getMe", status=502, raw_body="<html>502 Bad Gateway</html>")
    with pytest.raises(ClientDecodeError):
        await bot.get_me()
    assert len(tg.messages(42)) == 0
    assert (await bot.send_message(42, "hi")).message_id == 1


async def test_wait_for_times_out_with_a_dump(tg: FakeBotApi, bot: Bot) -> None:
    await bot.get_me()
    with pytest.raises(TimeoutError) as caught:
        await tg.wait_for(lambda t: False, timeout=0.1)
    assert "getMe [200]" in str(caught.value)
    with pytest.raises(TimeoutError, match="getMe"):
        await tg.wait_call("sendMessage", timeout=0.1)


async def test_aiogram_polling_runs_end_to_end(tg: FakeBotApi, bot: Bot) -> None:
    dispatcher = Dispatcher()

    @dispatcher.message()
    async def echo(message: Message) -> None:
        await message.answer(f"echo: {message.text}")

    polling = asyncio.create_task(
        dispatcher.start_polling(
            bot, handle_signals=False, polling_timeout=5, close_bot_session=False
        )
    )
    try:
        tg.push_message(chat_id=42, from_id=42, text="ping")
        await tg.wait_for(lambda t: [m.text for m in t.messages(42)] == ["echo: ping"])
        tg.push_message(chat_id=42, from_id=42, text="pong")
        await tg.wait_for(lambda t: len(t.messages(42)) == 2)
    finally:
        await dispatcher.stop_polling()
        await asyncio.wait_for(polling, 2)
    offsets = [c.params.get("offset") for c in tg.calls_of("getUpdates")]
    assert offsets[0] is None and all(o is not None for o in offsets[1:])


# -- the parser and the standalone runner --------------------------------------------------


def test_parse_html_counts_utf16_and_nests() -> None:
    plain, entities = parse_html(
        '😀 <b>a<i>b</i></b> <pre><code class="language-py">x = 1</code></pre> &lt;&amp;&#33;&nbsp;'
        " <blockquote expandable>q</blockquote>"
    )
    assert plain == "😀 ab x = 1 <&!&nbsp; q"
    assert entities == [
        {"offset": 3, "length": 2, "type": "bold"},
        {"offset": 4, "length": 1, "type": "italic"},
        {"offset": 6, "length": 5, "type": "pre", "language": "py"},
        {"offset": 22, "length": 1, "type": "expandable_blockquote"},
    ]


def test_parse_html_error_offsets_are_utf8_bytes() -> None:
    from beamclaw_gateway.fake_telegram import BotApiError

    with pytest.raises(BotApiError) as caught:
        parse_html("é<x>")
    assert caught.value.status == 400
    assert caught.value.description == (
        'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 2'
    )


async def test_the_module_runs_standalone() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "beamclaw_gateway.fake_telegram",
        "--port",
        "0",
        "--token",
        "77:CLI",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        banner = (await asyncio.wait_for(process.stdout.readline(), 10)).decode()
        base_url = banner.split(" at ")[1].split()[0]
        await process.stdout.readline()
        process.stdin.write(b"42 hello from stdin\n")
        await process.stdin.drain()
        async with aiohttp.ClientSession() as http:
            payload: dict[str, Any] = {"timeout": 5}
            async with http.post(f"{base_url}/bot77:CLI/getUpdates", data=payload) as response:
                answer = await response.json()
            assert answer["result"][0]["message"]["text"] == "hello from stdin"
            async with http.post(
                f"{base_url}/bot77:CLI/sendMessage", data={"chat_id": 42, "text": "hi back"}
            ) as response:
                assert response.status == 200
        line = (await asyncio.wait_for(process.stdout.readline(), 5)).decode()
        assert line.strip() == "bot -> 42 #2: hi back"
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 5)
    assert process.returncode == 0
