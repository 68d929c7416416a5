"""What users do, as Telegram would report it: queued Update dicts built from a few facts.

Each function stores what it creates in the :class:`BotState` (messages, files, callback
ids) and queues the update. Media is stored as a file the bot can fetch with ``getFile``;
a photo comes in three sizes (90 px, 320 px, full, by the longest side), smallest first;
all three download the bytes given, so each ``file_size`` is their length (Telegram would
re-encode the smaller ones).
"""

from __future__ import annotations

import struct
from typing import Any

from beamclaw_gateway.fake_telegram.state import BotState


def bot_command_entities(text: str) -> list[dict[str, Any]]:
    """The ``bot_command`` entity Telegram adds to a text starting with ``/command``."""
    if not text.startswith("/"):
        return []
    end = next((i for i, c in enumerate(text) if c.isspace()), len(text))
    return [{"type": "bot_command", "offset": 0, "length": end}] if end > 1 else []


def push_message(
    state: BotState,
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
    """A text message; ``entities`` default to the ``/command`` Telegram would detect."""
    found = bot_command_entities(text) if entities is None else entities
    content: dict[str, Any] = {"text": text}
    if found:
        content["entities"] = found
    message = state.user_message(
        chat_id,
        from_id,
        chat_type=chat_type,
        username=username,
        first_name=first_name,
        reply_to_message_id=reply_to_message_id,
        content=content,
    )
    state.enqueue({"message": message})
    return message


def push_media(
    state: BotState,
    chat_id: int,
    from_id: int,
    content: dict[str, Any],
    *,
    caption: str | None = None,
    chat_type: str = "private",
    username: str | None = None,
) -> dict[str, Any]:
    """A media message whose ``content`` is built by :func:`photo_content` and friends."""
    if caption:
        content = {**content, "caption": caption}
    message = state.user_message(
        chat_id, from_id, chat_type=chat_type, username=username, content=content
    )
    state.enqueue({"message": message})
    return message


def photo_content(state: BotState, data: bytes) -> dict[str, Any]:
    """``{"photo": [PhotoSize, ...]}`` for an image, sized from its PNG header if any."""
    width, height = image_size(data)
    sizes: list[dict[str, Any]] = []
    for scale in (90, 320, None):
        stored = state.add_file(data, "photos", "jpg", mime_type="image/jpeg")
        w, h = (width, height) if scale is None else _scaled(width, height, scale)
        sizes.append(
            {
                "file_id": stored.file_id,
                "file_unique_id": stored.file_unique_id,
                "width": w,
                "height": h,
                "file_size": len(data),
            }
        )
    return {"photo": sizes}


def document_content(
    state: BotState, data: bytes, file_name: str, mime_type: str | None
) -> dict[str, Any]:
    extension = file_name.rsplit(".", 1)[-1] if "." in file_name else "bin"
    stored = state.add_file(data, "documents", extension, file_name=file_name, mime_type=mime_type)
    document: dict[str, Any] = {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "file_name": file_name,
        "file_size": len(data),
    }
    if mime_type:
        document["mime_type"] = mime_type
    return {"document": document}


def voice_content(state: BotState, data: bytes, duration: int) -> dict[str, Any]:
    stored = state.add_file(data, "voice", "oga", mime_type="audio/ogg")
    voice = {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "duration": duration,
        "mime_type": "audio/ogg",
        "file_size": len(data),
    }
    return {"voice": voice}


def push_callback(
    state: BotState,
    chat_id: int,
    from_id: int,
    message_id: int,
    data: str,
    *,
    username: str | None = None,
) -> dict[str, Any]:
    """A button press on a message; returns the ``CallbackQuery`` (its ``id`` is what
    ``answerCallbackQuery`` must name)."""
    query = state.callback_query(chat_id, from_id, message_id, data, username)
    state.enqueue({"callback_query": query})
    return query


def push_edited_message(
    state: BotState, chat_id: int, from_id: int, message_id: int, text: str
) -> dict[str, Any]:
    """A user's edit of their message ``message_id`` (stored with its new text)."""
    found = state.messages.get((chat_id, message_id))
    if found is not None:
        previous = found
    else:
        chat = state.chats.get(chat_id) or state.add_chat(chat_id)
        previous: dict[str, Any] = {
            "message_id": message_id,
            "from": state.user(from_id, None, None),
            "chat": chat,
            "date": state.now(),
        }
    edited: dict[str, Any] = {**previous, "text": text, "edit_date": state.now()}
    edited.pop("entities", None)
    if commands := bot_command_entities(text):
        edited["entities"] = commands
    state.messages[(chat_id, message_id)] = edited
    state.enqueue({"edited_message": edited})
    return edited


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG header, else 800×600."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        if width > 0 and height > 0:
            return int(width), int(height)
    return 800, 600


def _scaled(width: int, height: int, longest: int) -> tuple[int, int]:
    factor = min(1.0, longest / max(width, height))
    return max(1, round(width * factor)), max(1, round(height * factor))
