"""The chat side of the fake Bot API: its state, what users do, and change notification.

:class:`UserActions` owns the :class:`BotState` and an "it changed" signal: every user
action (``push_*``) stores what it creates, queues one update and wakes whoever waits
(long polls, :meth:`FakeBotApi.wait_for`). :class:`FakeBotApi` adds the HTTP server.
"""

from __future__ import annotations

import asyncio
from typing import Any

from beamclaw_gateway.fake_telegram import inbound
from beamclaw_gateway.fake_telegram.records import CallbackAnswer, SentMessage, WebhookInfo
from beamclaw_gateway.fake_telegram.state import BotState


class UserActions:
    """The bot's chats and what users do in them."""

    def __init__(self, state: BotState) -> None:
        self.state = state
        self._changed = asyncio.Event()

    def _notify(self) -> None:
        """Wake every waiter: the state (or a call) changed."""
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    async def _changed_within(self, seconds: float) -> None:
        """Return on the next change, or after ``seconds``."""
        event = self._changed
        try:
            await asyncio.wait_for(event.wait(), seconds)
        except TimeoutError:
            return

    # -- the bot and its chats ---------------------------------------------------------

    @property
    def bot_id(self) -> int:
        return self.state.bot_id

    @property
    def bot_username(self) -> str:
        return self.state.bot_username

    @property
    def webhook(self) -> WebhookInfo | None:
        """The webhook ``setWebhook`` registered (None before, or after ``deleteWebhook``)."""
        return self.state.webhook

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        """Queued updates no ``getUpdates`` has confirmed yet (a copy)."""
        return list(self.state.updates)

    @property
    def callback_answers(self) -> list[CallbackAnswer]:
        return list(self.state.callback_answers)

    def messages(self, chat_id: int) -> list[SentMessage]:
        """What the bot sent into a chat, oldest first (deleted ones included, flagged)."""
        return self.state.sent_in(chat_id)

    def commands(
        self, scope: dict[str, Any] | None = None, language_code: str = ""
    ) -> list[dict[str, Any]]:
        """The ``setMyCommands`` list for a scope (default scope when None)."""
        key = BotState.commands_key(scope, language_code)
        return list(self.state.commands.get(key, []))

    def add_chat(self, chat_id: int, chat_type: str = "private", **names: str) -> None:
        """Make a chat exist before any user wrote in it (``username``, ``first_name``,
        ``title``), e.g. for a bot that messages first."""
        self.state.add_chat(chat_id, chat_type, **names)

    def block(self, chat_id: int, blocked: bool = True) -> None:
        """The user blocks (or unblocks) the bot: sends answer 403 Forbidden."""
        if blocked:
            self.state.blocked.add(chat_id)
        else:
            self.state.blocked.discard(chat_id)

    # -- what users do (each queues one update and wakes long polls) -------------------

    def push_message(
        self,
        chat_id: int,
        from_id: int,
        text: str,
        *,
        chat_type: str = "private",
        username: str | None = None,
        first_name: str | None = None,
        reply_to_message_id: int | None = None,
        entities: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A user's text message; returns the ``Message`` dict. ``entities`` default to the
        ``bot_command`` entity Telegram detects for a leading ``/command``."""
        message = inbound.push_message(
            self.state,
            chat_id,
            from_id,
            text,
            chat_type=chat_type,
            username=username,
            first_name=first_name,
            reply_to_message_id=reply_to_message_id,
            entities=entities,
        )
        self._notify()
        return message

    def push_photo(
        self, chat_id: int, from_id: int, data: bytes, caption: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        """A photo (three sizes, smallest first); ``kw``: ``chat_type``, ``username``."""
        return self._push_media(
            chat_id, from_id, inbound.photo_content(self.state, data), caption, kw
        )

    def push_document(
        self,
        chat_id: int,
        from_id: int,
        data: bytes,
        file_name: str = "file.bin",
        mime_type: str | None = "application/octet-stream",
        caption: str | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        content = inbound.document_content(self.state, data, file_name, mime_type)
        return self._push_media(chat_id, from_id, content, caption, kw)

    def push_voice(
        self, chat_id: int, from_id: int, data: bytes, duration: int = 1, **kw: Any
    ) -> dict[str, Any]:
        content = inbound.voice_content(self.state, data, duration)
        return self._push_media(chat_id, from_id, content, None, kw)

    def push_callback(
        self, chat_id: int, from_id: int, message_id: int, data: str, username: str | None = None
    ) -> dict[str, Any]:
        """A press on an inline button of ``message_id``; returns the ``CallbackQuery``."""
        query = inbound.push_callback(
            self.state, chat_id, from_id, message_id, data, username=username
        )
        self._notify()
        return query

    def push_edited_message(
        self, chat_id: int, from_id: int, message_id: int, text: str
    ) -> dict[str, Any]:
        edited = inbound.push_edited_message(self.state, chat_id, from_id, message_id, text)
        self._notify()
        return edited

    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue any Update dict (numbered unless it has an ``update_id``); returns it."""
        queued = self.state.enqueue(update)
        self._notify()
        return queued

    def _push_media(
        self,
        chat_id: int,
        from_id: int,
        content: dict[str, Any],
        caption: str | None,
        kw: dict[str, Any],
    ) -> dict[str, Any]:
        message = inbound.push_media(self.state, chat_id, from_id, content, caption=caption, **kw)
        self._notify()
        return message
