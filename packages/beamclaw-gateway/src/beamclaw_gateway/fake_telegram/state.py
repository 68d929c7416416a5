"""The fake Bot API's world: chats, messages, files, the update queue, webhook and commands.

Pure and synchronous (the clock is injected); the HTTP shell in
:mod:`~beamclaw_gateway.fake_telegram.server` drives it. Invariants:

* message ids increase per chat, shared by what users and the bot send (from 1);
* update ids increase globally (from ``first_update_id``); an update stays queued until a
  ``getUpdates`` with a higher ``offset`` confirms it (or ``deleteWebhook``/``setWebhook``
  with ``drop_pending_updates`` drops the queue);
* a chat exists once a user wrote in it (any ``push_*``) or a test added it
  (:meth:`BotState.add_chat`); sending into any other chat is "chat not found".
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from beamclaw_gateway.fake_telegram.errors import BotApiError
from beamclaw_gateway.fake_telegram.records import (
    CallbackAnswer,
    SentMessage,
    StoredFile,
    WebhookInfo,
)

#: update types Telegram leaves out unless ``allowed_updates`` names them
OPT_IN_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


def update_type(update: dict[str, Any]) -> str:
    """The kind of an Update dict (``message``, ``callback_query``…)."""
    return next((key for key in update if key != "update_id"), "")


@dataclass
class BotState:
    """Everything the fake Telegram remembers for one bot."""

    bot_id: int
    bot_username: str
    bot_first_name: str = "Fake Bot"
    clock: Callable[[], float] = time.time
    first_update_id: int = 10_000
    chats: dict[int, dict[str, Any]] = field(default_factory=dict[int, dict[str, Any]])
    messages: dict[tuple[int, int], dict[str, Any]] = field(
        default_factory=dict[tuple[int, int], dict[str, Any]]
    )
    """Every message (user's and bot's) by (chat id, message id): the Bot API dict."""
    sent: dict[tuple[int, int], SentMessage] = field(
        default_factory=dict[tuple[int, int], SentMessage]
    )
    """The bot's messages by (chat id, message id), in sending order."""
    files: dict[str, StoredFile] = field(default_factory=dict[str, StoredFile])
    updates: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Pending (unconfirmed) updates, oldest first."""
    allowed_updates: tuple[str, ...] = ()
    """The last ``allowed_updates`` a bot set (empty: Telegram's default set)."""
    webhook: WebhookInfo | None = None
    commands: dict[tuple[str, str], list[dict[str, Any]]] = field(
        default_factory=dict[tuple[str, str], list[dict[str, Any]]]
    )
    """``setMyCommands`` lists by (scope as JSON, language code)."""
    callbacks: dict[str, bool] = field(default_factory=dict[str, bool])
    """Callback query ids pushed → answered yet."""
    callback_answers: list[CallbackAnswer] = field(default_factory=list[CallbackAnswer])
    blocked: set[int] = field(default_factory=set[int])
    """Chats whose user blocked the bot (sends answer 403)."""
    _last_message_id: dict[int, int] = field(default_factory=dict[int, int])
    _last_update_id: int = 0
    _file_count: int = 0
    _callback_count: int = 0

    # -- identity and chats -------------------------------------------------------------

    def me(self) -> dict[str, Any]:
        """The bot's ``User`` object (``getMe``)."""
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.bot_first_name,
            "username": self.bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    def add_chat(
        self,
        chat_id: int,
        chat_type: str = "private",
        *,
        username: str | None = None,
        first_name: str | None = None,
        title: str | None = None,
    ) -> dict[str, Any]:
        """Register (or update) a chat; returns its ``Chat`` object."""
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = first_name or f"User {chat_id}"
            if username:
                chat["username"] = username
        else:
            chat["title"] = title or f"Chat {chat_id}"
        self.chats[chat_id] = chat
        return chat

    def chat(self, chat_id: int) -> dict[str, Any]:
        """The chat the bot may write to (400 "chat not found", 403 when blocked)."""
        chat = self.chats.get(chat_id)
        if chat is None:
            raise BotApiError.bad_request("chat not found")
        if chat_id in self.blocked:
            raise BotApiError(403, "Forbidden: bot was blocked by the user")
        return chat

    def next_message_id(self, chat_id: int) -> int:
        self._last_message_id[chat_id] = self._last_message_id.get(chat_id, 0) + 1
        return self._last_message_id[chat_id]

    def now(self) -> int:
        return int(self.clock())

    @staticmethod
    def commands_key(scope: dict[str, Any] | None, language_code: str | None) -> tuple[str, str]:
        """The key of a ``setMyCommands`` list: (scope as sorted JSON, language code)."""
        return json.dumps(scope or {"type": "default"}, sort_keys=True), language_code or ""

    # -- files --------------------------------------------------------------------------

    def add_file(
        self,
        data: bytes,
        folder: str,
        extension: str,
        *,
        file_name: str | None = None,
        mime_type: str | None = None,
    ) -> StoredFile:
        """Store bytes under a fresh ``file_id`` and ``file_path`` (``photos/file_3.jpg``)."""
        self._file_count += 1
        n = self._file_count
        stored = StoredFile(
            file_id=f"FAKE-{self.bot_id}-{n:06d}",
            file_unique_id=f"U{n:06d}",
            file_path=f"{folder}/file_{n}.{extension}",
            data=data,
            file_name=file_name,
            mime_type=mime_type,
        )
        self.files[stored.file_id] = stored
        return stored

    def file_by_path(self, file_path: str) -> StoredFile | None:
        return next((f for f in self.files.values() if f.file_path == file_path), None)

    # -- the update queue ---------------------------------------------------------------

    def enqueue(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update, numbering it unless it carries an ``update_id`` already."""
        if "update_id" not in update:
            update = {"update_id": max(self._last_update_id + 1, self.first_update_id), **update}
        self._last_update_id = max(self._last_update_id, int(update["update_id"]))
        self.updates.append(update)
        return update

    def confirm(self, offset: int) -> None:
        """Apply a ``getUpdates`` offset: drop confirmed updates (negative: keep the last N)."""
        if offset < 0:
            del self.updates[: max(0, len(self.updates) + offset)]
        else:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]

    def deliverable(self, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` pending updates of an allowed type; others are dropped, as
        Telegram never queues what a bot did not ask for."""
        allowed = set(self.allowed_updates)
        kept: list[dict[str, Any]] = []
        for update in self.updates:
            kind = update_type(update)
            if (kind in allowed) if allowed else (kind not in OPT_IN_UPDATES):
                kept.append(update)
        self.updates = kept
        return kept[: max(1, min(limit, 100))]

    def drop_pending(self) -> None:
        self.updates.clear()

    # -- what users send ----------------------------------------------------------------

    def user(self, user_id: int, username: str | None, first_name: str | None) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": user_id,
            "is_bot": False,
            "first_name": first_name or f"User {user_id}",
            "language_code": "en",
        }
        if username:
            user["username"] = username
        return user

    def user_message(
        self,
        chat_id: int,
        from_id: int,
        *,
        chat_type: str = "private",
        username: str | None = None,
        first_name: str | None = None,
        reply_to_message_id: int | None = None,
        content: dict[str, Any],
    ) -> dict[str, Any]:
        """A new message from a user (stored, not queued): ``content`` holds ``text``,
        ``photo``, ``caption``… The chat is registered if new."""
        chat = self.chats.get(chat_id)
        if chat is None or chat["type"] != chat_type:
            chat = self.add_chat(chat_id, chat_type, username=username, first_name=first_name)
        message: dict[str, Any] = {
            "message_id": self.next_message_id(chat_id),
            "from": self.user(from_id, username, first_name),
            "chat": chat,
            "date": self.now(),
            **content,
        }
        if reply_to_message_id is not None:
            replied = self.messages.get((chat_id, reply_to_message_id))
            if replied is not None:
                message["reply_to_message"] = {
                    k: v for k, v in replied.items() if k != "reply_to_message"
                }
        self.messages[(chat_id, message["message_id"])] = message
        return message

    def callback_query(
        self, chat_id: int, from_id: int, message_id: int, data: str, username: str | None
    ) -> dict[str, Any]:
        """A ``CallbackQuery`` on a message (an inaccessible one if the fake never saw it)."""
        self._callback_count += 1
        query_id = f"{self.bot_id}{self._callback_count:08d}"
        self.callbacks[query_id] = False
        message = self.messages.get((chat_id, message_id))
        if message is None:
            chat = self.chats.get(chat_id) or self.add_chat(chat_id)
            message = {"chat": chat, "message_id": message_id, "date": 0}
        return {
            "id": query_id,
            "from": self.user(from_id, username, None),
            "message": message,
            "chat_instance": str(abs(hash((self.bot_id, chat_id)))),
            "data": data,
        }

    # -- what the bot sent --------------------------------------------------------------

    def sent_in(self, chat_id: int) -> list[SentMessage]:
        return [m for (chat, _), m in self.sent.items() if chat == chat_id]

    def stored(self, chat_id: int, message_id: int, *, action: str) -> dict[str, Any]:
        """A live message, or Telegram's 400 "message to <action> not found"."""
        message = self.messages.get((chat_id, message_id))
        if message is None:  # never sent, or deleted
            raise BotApiError.bad_request(f"message to {action} not found")
        return message
