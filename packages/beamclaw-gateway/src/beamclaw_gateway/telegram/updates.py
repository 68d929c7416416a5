"""Reading a Telegram update: who sent what where (pure).

A message's reply target, and its deduplication id, is ``<chat id>:<message id>``; a
proactive target is ``<chat id>`` alone. A private chat speaks for its user
(``tg:<user id>``); a group is a session of its own (``tg:group:<chat id>``).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiogram.types import Message, Update

from beamclaw_gateway.telegram.access import Sender

CHANNEL = "telegram"


def account(user_id: int) -> str:
    """The channel account of a Telegram user (linked to a person by pairing)."""
    return f"tg:{user_id}"


def group_account(chat_id: int) -> str:
    return f"tg:group:{chat_id}"


def reply_target(chat_id: int, message_id: int) -> str:
    return f"{chat_id}:{message_id}"


@dataclass(frozen=True, slots=True)
class Target:
    chat_id: int
    message_id: int | None
    """The message answered (a reply); None: a message of its own."""


def parse_target(target: str) -> Target | None:
    """``<chat>`` or ``<chat>:<message>``; None when it is neither."""
    chat, _, message = target.partition(":")
    try:
        return Target(int(chat), int(message) if message else None)
    except ValueError:
        return None


def update_chat(update: Update) -> tuple[int | None, int | None]:
    """The chat and message an update belongs to (for the update log)."""
    message = update.message or update.edited_message
    if message is not None:
        return message.chat.id, message.message_id
    query = update.callback_query
    if query is not None and query.message is not None:
        return query.message.chat.id, None
    return None, None


def mentions(message: Message, bot_username: str | None, bot_id: int | None) -> bool:
    """The bot is @mentioned, replied to, or named by a ``/command@bot``."""
    reply = message.reply_to_message
    if reply is not None and reply.from_user is not None and reply.from_user.id == bot_id:
        return True
    if bot_username is None:
        return False
    text = message.text or message.caption or ""
    return f"@{bot_username.lower()}" in text.lower()


def sender_of(message: Message, bot_username: str | None, bot_id: int | None) -> Sender | None:
    user = message.from_user
    if user is None or user.is_bot:
        return None
    private = message.chat.type == "private"
    return Sender(
        user.id,
        user.username,
        message.chat.id,
        private,
        addressed=private or mentions(message, bot_username, bot_id),
    )


def strip_mention(text: str, bot_username: str | None) -> str:
    if bot_username is None:
        return text
    return text.replace(f"@{bot_username}", "").strip()
