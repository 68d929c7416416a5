"""A fake Telegram Bot API server, shipped as a test double (like the fake LLM servers).

Real HTTP on a free loopback port, accepting exactly what aiogram 3 sends (urlencoded or
multipart form bodies; JSON and query strings too) and answering as Telegram does::

    async with FakeBotApi(token="123456:TEST") as tg:
        bot = Bot(tg.token, session=AiohttpSession(api=TelegramAPIServer.from_base(tg.base_url)))
        tg.push_message(chat_id=42, from_id=42, text="hi")
        ...
        call = await tg.wait_call("sendMessage")
        assert tg.messages(42)[-1].text == "hello"

* :class:`FakeBotApi` — the server: ``push_*`` user actions, ``calls``, ``messages(chat)``,
  ``wait_for``/``wait_call``, fault injection (``fail_next``, ``hang_get_updates``,
  ``reject_token``, ``block``) and webhook delivery (``deliver_webhook``).
* :class:`Call`, :class:`SentMessage`, :class:`WebhookInfo`, :class:`CallbackAnswer`,
  :class:`StoredFile` — what it records.
* :class:`BotApiError` — a Bot API error answer (status, Telegram's description).
* :func:`parse_html` — Telegram's strict ``parse_mode=HTML`` parser (plain text, entities).

Methods served: getMe, getUpdates, setWebhook, deleteWebhook, getWebhookInfo,
setMyCommands, getMyCommands, deleteMyCommands, sendMessage, editMessageText,
editMessageCaption, editMessageReplyMarkup, deleteMessage, sendChatAction,
answerCallbackQuery, sendPhoto, sendDocument, sendVoice, sendAudio, sendVideo, getFile,
getChat; anything else is 404. Run standalone with
``python -m beamclaw_gateway.fake_telegram --port 8081 --token 123456:TEST``.
"""

from beamclaw_gateway.fake_telegram.api import METHODS
from beamclaw_gateway.fake_telegram.errors import BotApiError
from beamclaw_gateway.fake_telegram.records import (
    Call,
    CallbackAnswer,
    SentMessage,
    StoredFile,
    WebhookInfo,
)
from beamclaw_gateway.fake_telegram.server import FakeBotApi
from beamclaw_gateway.fake_telegram.telegram_html import parse_html

__all__ = [
    "METHODS",
    "BotApiError",
    "Call",
    "CallbackAnswer",
    "FakeBotApi",
    "SentMessage",
    "StoredFile",
    "WebhookInfo",
    "parse_html",
]
