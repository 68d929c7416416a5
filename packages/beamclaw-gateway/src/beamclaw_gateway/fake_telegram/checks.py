"""The validations Telegram applies to what a bot sends, with Telegram's error texts.

* :func:`render_text` — ``parse_mode`` (HTML parsed strictly, see
  :mod:`~beamclaw_gateway.fake_telegram.telegram_html`), emptiness and the length limits
  (4096 for message text, 1024 for captions, counted after parsing in UTF-16 code units,
  Telegram's unit for text: the stricter reading of "4096 characters", so text that fits
  the fake fits Telegram — an emoji counts 2).
  ``MarkdownV2``/``Markdown`` are accepted but not parsed: their text is kept as sent.
* :func:`check_reply_markup` — inline keyboards (button text, exactly one action,
  ``callback_data`` of 1-64 bytes → ``BUTTON_DATA_INVALID``), reply keyboards,
  ``remove_keyboard``, ``force_reply``.
* :func:`check_commands` — ``setMyCommands`` lists (1-32 chars of ``[a-z0-9_]``, a 1-256
  character description, at most 100 commands).
"""

from __future__ import annotations

import re
from typing import Any

from beamclaw_gateway.fake_telegram.errors import BotApiError
from beamclaw_gateway.fake_telegram.telegram_html import parse_html, utf16_len

MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_DATA = 64
_COMMAND = re.compile(r"[a-z0-9_]{1,32}")
_BUTTON_ACTIONS = frozenset(
    {
        "url",
        "callback_data",
        "web_app",
        "login_url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    }
)


def render_text(
    text: str | None,
    parse_mode: str | None,
    entities: list[Any] | None,
    *,
    caption: bool = False,
) -> tuple[str, list[dict[str, Any]]]:
    """Plain text and entities of a message text (or caption), validated as Telegram does.

    Raises:
        BotApiError: 400 for unparsable markup, an empty text or one over the limit.
    """
    raw = text or ""
    if not parse_mode:
        plain, found = raw, [e for e in entities or [] if isinstance(e, dict)]
    elif parse_mode.lower() == "html":
        plain, found = parse_html(raw)
    elif parse_mode.lower() in ("markdownv2", "markdown"):
        plain, found = raw, []
    else:
        raise BotApiError.bad_request("unsupported parse_mode")
    if caption:
        if utf16_len(plain) > MAX_CAPTION:
            raise BotApiError.bad_request("message caption is too long")
    elif not plain.strip():
        raise BotApiError.bad_request("message text is empty")
    elif utf16_len(plain) > MAX_TEXT:
        raise BotApiError.bad_request("message is too long")
    return plain, found


def check_reply_markup(markup: dict[str, Any]) -> None:
    """Raise the 400 Telegram answers for an invalid ``reply_markup``."""
    if "inline_keyboard" in markup:
        for button in _buttons(markup["inline_keyboard"]):
            _check_inline_button(button)
    elif "keyboard" in markup:
        for button in _buttons(markup["keyboard"]):
            if isinstance(button, str):
                continue
            if not isinstance(button, dict) or not button.get("text"):
                raise BotApiError.bad_request("keyboard button text is empty")
    elif not (markup.get("remove_keyboard") is True or markup.get("force_reply") is True):
        raise BotApiError.bad_request("can't parse reply keyboard markup JSON object")


def _buttons(rows: Any) -> list[Any]:
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise BotApiError.bad_request("can't parse reply keyboard markup JSON object")
    return [button for row in rows for button in row]


def _check_inline_button(button: Any) -> None:
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise BotApiError.bad_request(
            'can\'t parse inline keyboard button: Field "text" must be of type String'
        )
    actions = [key for key in button if key in _BUTTON_ACTIONS]
    if len(actions) != 1:
        raise BotApiError.bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    if "callback_data" in button:
        data = button["callback_data"]
        size = len(data.encode("utf-8")) if isinstance(data, str) else 0
        if not 1 <= size <= MAX_CALLBACK_DATA:
            raise BotApiError.bad_request("BUTTON_DATA_INVALID")
    if "url" in button:
        url = button["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "tg://")):
            raise BotApiError.bad_request("BUTTON_URL_INVALID")


def check_commands(commands: list[Any]) -> list[dict[str, Any]]:
    """The ``BotCommand`` list of a ``setMyCommands`` call, validated."""
    if len(commands) > 100:
        raise BotApiError.bad_request("too many commands specified")
    checked: list[dict[str, Any]] = []
    for item in commands:
        if not isinstance(item, dict):
            raise BotApiError.bad_request("can't parse BotCommand JSON object")
        command, description = item.get("command"), item.get("description")
        if not isinstance(command, str) or not _COMMAND.fullmatch(command):
            raise BotApiError.bad_request("BOT_COMMAND_INVALID")
        if not isinstance(description, str) or not 1 <= len(description) <= 256:
            raise BotApiError.bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        checked.append({k: v for k, v in item.items() if v is not None})
    return checked
