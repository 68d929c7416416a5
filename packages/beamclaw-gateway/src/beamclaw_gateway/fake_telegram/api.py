"""The Bot API method table: method name (case-insensitive, as on Telegram) → handler.

Handlers are pure functions ``(state, params, uploads) -> result`` raising
:class:`BotApiError`. ``getUpdates`` is split: :func:`start_get_updates` applies its
parameters (409 while a webhook is set, ``offset`` confirmation, ``allowed_updates``) and
the HTTP shell does the long-poll wait around :meth:`BotState.deliverable`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from beamclaw_gateway.fake_telegram import api_messages as msgs
from beamclaw_gateway.fake_telegram.checks import check_commands
from beamclaw_gateway.fake_telegram.errors import BotApiError
from beamclaw_gateway.fake_telegram.params import Params, Upload
from beamclaw_gateway.fake_telegram.records import CallbackAnswer, WebhookInfo
from beamclaw_gateway.fake_telegram.state import BotState

Handler = Callable[[BotState, Params, dict[str, Upload]], Any]

WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
#: the ``description`` Telegram adds to some successful answers
SUCCESS_DESCRIPTIONS = {
    "setWebhook": "Webhook was set",
    "deleteWebhook": "Webhook was deleted",
}
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


def start_get_updates(state: BotState, p: Params) -> tuple[int, float]:
    """Apply a ``getUpdates`` call's parameters; returns (limit, long-poll timeout seconds)."""
    if state.webhook is not None:
        raise BotApiError(409, WEBHOOK_CONFLICT)
    allowed = p.sequence("allowed_updates")
    if allowed is not None:
        state.allowed_updates = tuple(str(kind) for kind in allowed)
    if p.has("offset"):
        state.confirm(p.integer("offset"))
    return p.integer("limit", 100), float(max(0, p.integer("timeout", 0)))


def get_me(state: BotState, p: Params, uploads: dict[str, Upload]) -> dict[str, Any]:
    return state.me()


def set_webhook(state: BotState, p: Params, uploads: dict[str, Upload]) -> bool:
    """Register the webhook; an empty ``url`` removes it. Plain ``http://`` URLs are
    accepted (Telegram demands HTTPS) so tests can point it at a loopback server."""
    url = p.string("url") or ""
    secret = p.string("secret_token")
    if secret is not None and not _SECRET.fullmatch(secret):
        raise BotApiError.bad_request("secret token contains unallowed characters")
    if url and not url.startswith(("http://", "https://")):
        raise BotApiError.bad_request("bad webhook: An HTTPS URL must be provided for webhook")
    allowed = p.sequence("allowed_updates")
    if p.flag("drop_pending_updates"):
        state.drop_pending()
    if allowed is not None:
        state.allowed_updates = tuple(str(kind) for kind in allowed)
    state.webhook = (
        WebhookInfo(
            url=url,
            secret_token=secret,
            allowed_updates=None if allowed is None else tuple(str(k) for k in allowed),
            max_connections=p.integer("max_connections", 40),
        )
        if url
        else None
    )
    return True


def delete_webhook(state: BotState, p: Params, uploads: dict[str, Upload]) -> bool:
    if p.flag("drop_pending_updates"):
        state.drop_pending()
    state.webhook = None
    return True


def get_webhook_info(state: BotState, p: Params, uploads: dict[str, Upload]) -> dict[str, Any]:
    info: dict[str, Any] = {
        "url": state.webhook.url if state.webhook else "",
        "has_custom_certificate": False,
        "pending_update_count": len(state.updates),
    }
    if state.webhook is not None:
        info["max_connections"] = state.webhook.max_connections
        if state.webhook.allowed_updates is not None:
            info["allowed_updates"] = list(state.webhook.allowed_updates)
    return info


def _commands_key(p: Params) -> tuple[str, str]:
    return BotState.commands_key(p.mapping("scope"), p.string("language_code"))


def set_my_commands(state: BotState, p: Params, uploads: dict[str, Upload]) -> bool:
    commands = p.sequence("commands")
    if commands is None:
        raise BotApiError.bad_request("commands is empty")
    state.commands[_commands_key(p)] = check_commands(commands)
    return True


def get_my_commands(state: BotState, p: Params, uploads: dict[str, Upload]) -> list[Any]:
    return list(state.commands.get(_commands_key(p), []))


def delete_my_commands(state: BotState, p: Params, uploads: dict[str, Upload]) -> bool:
    state.commands.pop(_commands_key(p), None)
    return True


def answer_callback_query(state: BotState, p: Params, uploads: dict[str, Upload]) -> bool:
    """Each pushed callback query can be answered once; anything else is "too old"."""
    query_id = p.string("callback_query_id") or ""
    if state.callbacks.get(query_id, True):
        raise BotApiError.bad_request(
            "query is too old and response timeout expired or query ID is invalid"
        )
    text = p.string("text")
    if text is not None and len(text) > 200:
        raise BotApiError.bad_request("MESSAGE_TOO_LONG")
    state.callbacks[query_id] = True
    state.callback_answers.append(
        CallbackAnswer(
            callback_query_id=query_id,
            text=text,
            show_alert=p.flag("show_alert"),
            url=p.string("url"),
            cache_time=p.integer("cache_time", 0),
        )
    )
    return True


def get_file(state: BotState, p: Params, uploads: dict[str, Upload]) -> dict[str, Any]:
    stored = state.files.get(p.string("file_id") or "")
    if stored is None:
        raise BotApiError.bad_request("invalid file_id")
    if len(stored.data) > 20 * 1024 * 1024:
        raise BotApiError.bad_request("file is too big")
    return stored.as_file()


def get_chat(state: BotState, p: Params, uploads: dict[str, Upload]) -> dict[str, Any]:
    chat = state.chats.get(p.chat_id())
    if chat is None:
        raise BotApiError.bad_request("chat not found")
    return {**chat, "accent_color_id": 0, "max_reaction_count": 11}


_HANDLERS: dict[str, Handler] = {
    "getMe": get_me,
    "setWebhook": set_webhook,
    "deleteWebhook": delete_webhook,
    "getWebhookInfo": get_webhook_info,
    "setMyCommands": set_my_commands,
    "getMyCommands": get_my_commands,
    "deleteMyCommands": delete_my_commands,
    "sendMessage": msgs.send_message,
    "editMessageText": msgs.edit_message_text,
    "editMessageCaption": msgs.edit_message_caption,
    "editMessageReplyMarkup": msgs.edit_message_reply_markup,
    "deleteMessage": msgs.delete_message,
    "sendChatAction": msgs.send_chat_action,
    "answerCallbackQuery": answer_callback_query,
    "getFile": get_file,
    "getChat": get_chat,
    **{f"send{kind.title()}": partial(msgs.send_media, kind) for kind in msgs.MEDIA_KINDS},
}
#: every method the fake serves, by its canonical name (``getUpdates`` is the shell's)
METHODS = (*_HANDLERS, "getUpdates")
_CANONICAL = {name.lower(): name for name in METHODS}


def canonical_name(method: str) -> str:
    """``sendmessage`` → ``sendMessage``; unknown names are returned unchanged."""
    return _CANONICAL.get(method.lower(), method)


def handler_for(method: str) -> Handler | None:
    """The handler of a canonical method name (None: unknown, or ``getUpdates``)."""
    return _HANDLERS.get(method)
