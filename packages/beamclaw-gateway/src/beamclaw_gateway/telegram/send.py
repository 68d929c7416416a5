"""Sending text to Telegram: rendered chunks, the plain-text retry, edits of drafts.

Invariants: a chunk is sent as HTML; when Telegram refuses it (400: markup it cannot
parse) the same chunk goes again as plain text, once. Editing a message to the text it
already shows is success ("message is not modified"). A reply to a message that is gone
(deleted) is sent without the reply reference.
"""

from __future__ import annotations

import base64

from aiogram.methods import (
    DeleteMessage,
    EditMessageText,
    SendAudio,
    SendDocument,
    SendMessage,
    SendPhoto,
    SendVoice,
)
from aiogram.types import (
    BufferedInputFile,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    ReplyParameters,
)

from beamclaw_gateway.telegram.api import BotApi
from beamclaw_gateway.telegram.errors import TelegramBadRequestError, TelegramSendError
from beamclaw_gateway.telegram.render import Chunk
from beamclaw_tools import FilePart, ImagePart

_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
VOICE_TYPES = frozenset({"audio/ogg", "audio/opus"})
"""Sent with ``sendVoice`` (Telegram plays OGG/Opus as a voice message)."""
AUDIO_TYPES = frozenset({"audio/mpeg", "audio/mp3", "audio/mp4", "audio/x-m4a", "audio/m4a"})
"""Sent with ``sendAudio`` (Telegram's music player takes MP3 and M4A); any other file
goes with ``sendDocument``."""


def file_method(media_type: str) -> str:
    """``voice``, ``audio`` or ``document``: how a file of ``media_type`` is sent."""
    media = media_type.lower()
    if media in VOICE_TYPES:
        return "voice"
    return "audio" if media in AUDIO_TYPES else "document"


def _unchanged(exc: TelegramBadRequestError) -> bool:
    return "not modified" in exc.detail


class TextSender:
    """Sends and edits one chunk at a time through :class:`BotApi`."""

    def __init__(self, api: BotApi) -> None:
        self.api = api
        self.plain_retries = 0
        """Chunks Telegram refused as HTML and took as plain text."""

    async def send(
        self,
        chat_id: int,
        chunk: Chunk,
        *,
        reply_to: int | None = None,
        markup: InlineKeyboardMarkup | None = None,
    ) -> int:
        """Send ``chunk``; returns the new message's id."""
        reply = (
            ReplyParameters(message_id=reply_to, allow_sending_without_reply=True)
            if reply_to is not None
            else None
        )
        try:
            sent = await self.api(
                SendMessage(
                    chat_id=chat_id,
                    text=chunk.html,
                    parse_mode="HTML",
                    reply_parameters=reply,
                    reply_markup=markup,
                    link_preview_options=_NO_PREVIEW,
                )
            )
        except TelegramBadRequestError:
            self.plain_retries += 1
            sent = await self.api(
                SendMessage(
                    chat_id=chat_id,
                    text=chunk.plain,
                    reply_parameters=reply,
                    reply_markup=markup,
                    link_preview_options=_NO_PREVIEW,
                )
            )
        return sent.message_id

    async def edit(
        self,
        chat_id: int,
        message_id: int,
        chunk: Chunk,
        *,
        markup: InlineKeyboardMarkup | None = None,
        html: bool = True,
    ) -> None:
        """Make ``message_id`` show ``chunk`` (HTML, else plain)."""
        try:
            await self.api(
                EditMessageText(
                    chat_id=chat_id,
                    message_id=message_id,
                    text=chunk.html if html else chunk.plain,
                    parse_mode="HTML" if html else None,
                    reply_markup=markup,
                    link_preview_options=_NO_PREVIEW,
                )
            )
        except TelegramBadRequestError as exc:
            if _unchanged(exc):
                return
            if not html:
                raise
            self.plain_retries += 1
            await self.edit(chat_id, message_id, chunk, markup=markup, html=False)

    async def delete(self, chat_id: int, message_id: int) -> None:
        """Delete a message; one already gone is no error."""
        try:
            await self.api(DeleteMessage(chat_id=chat_id, message_id=message_id))
        except TelegramSendError:
            return

    async def photo(self, chat_id: int, part: ImagePart) -> int:
        """Send an image (a tool's picture in an answer); returns the message's id."""
        suffix = part.media_type.rpartition("/")[2] or "png"
        upload = BufferedInputFile(base64.b64decode(part.data), filename=f"image.{suffix}")
        sent = await self.api(SendPhoto(chat_id=chat_id, photo=upload))
        return sent.message_id

    async def file(self, chat_id: int, part: FilePart, data: bytes) -> int:
        """Send a tool's file (``data``: its bytes) as a voice message, a track or a
        document (:func:`file_method`); returns the message's id."""
        upload = BufferedInputFile(data, filename=part.name)
        method = file_method(part.media_type)
        if method == "voice":
            sent = await self.api(SendVoice(chat_id=chat_id, voice=upload))
        elif method == "audio":
            sent = await self.api(SendAudio(chat_id=chat_id, audio=upload))
        else:
            sent = await self.api(SendDocument(chat_id=chat_id, document=upload))
        return sent.message_id
