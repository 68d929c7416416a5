"""Bot API methods that send, edit and delete messages (pure functions over the state).

Each takes the :class:`BotState`, the call's :class:`Params` and its uploads, and returns
the ``result`` Telegram would answer or raises :class:`BotApiError` with Telegram's text.
Everything is validated before anything is stored, so a failed call leaves no trace
except in ``calls``. As on Telegram, ``editMessageText`` without ``reply_markup`` removes
the message's inline keyboard, and an edit that changes nothing is a 400 "message is not
modified".
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from typing import Any

from beamclaw_gateway.fake_telegram.checks import check_reply_markup, render_text
from beamclaw_gateway.fake_telegram.errors import BotApiError
from beamclaw_gateway.fake_telegram.inbound import (
    document_content,
    image_size,
    photo_content,
    voice_content,
)
from beamclaw_gateway.fake_telegram.params import Params, Upload
from beamclaw_gateway.fake_telegram.records import SentMessage, StoredFile
from beamclaw_gateway.fake_telegram.state import BotState

NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
MAX_PHOTO_BYTES = 10 * 1024 * 1024
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
MEDIA_KINDS = ("photo", "document", "voice", "audio", "video")


def send_message(state: BotState, p: Params, uploads: dict[str, Upload]) -> dict[str, Any]:
    target = _target(state, p)
    text, parse_mode = p.string("text"), p.string("parse_mode")
    plain, entities = render_text(text, parse_mode, p.sequence("entities"))
    content: dict[str, Any] = {"text": plain}
    if entities:
        content["entities"] = entities
    sent = SentMessage(target.chat_id, 0, "text", text=text, parse_mode=parse_mode, sent_text=text)
    sent.plain_text, sent.entities = plain, entities
    return _store_sent(state, target, sent, content)


def send_media(kind: str, state: BotState, p: Params, uploads: dict[str, Upload]) -> Any:
    """``sendPhoto``/``sendDocument``/``sendVoice``/``sendAudio``/``sendVideo``."""
    target = _target(state, p)
    caption, parse_mode = p.string("caption"), p.string("parse_mode")
    plain, entities = render_text(caption, parse_mode, p.sequence("caption_entities"), caption=True)
    data, file_name = _media_bytes(kind, state, p, uploads)
    content = _media_content(kind, state, data, file_name, p)
    if plain:
        content["caption"] = plain
        if entities:
            content["caption_entities"] = entities
    sent = SentMessage(
        target.chat_id,
        0,
        kind,
        caption=caption,
        parse_mode=parse_mode,
        file=data,
        file_name=file_name,
        sent_text=caption,
    )
    sent.plain_text, sent.entities = plain, entities
    return _store_sent(state, target, sent, content)


def edit_message_text(state: BotState, p: Params, uploads: dict[str, Upload]) -> Any:
    message, sent = _editable(state, p)
    if "text" not in message:
        raise BotApiError.bad_request("there is no text in the message to edit")
    text, parse_mode = p.string("text"), p.string("parse_mode")
    plain, entities = render_text(text, parse_mode, p.sequence("entities"))
    return _apply_edit(state, p, message, sent, "text", text or "", plain, entities, parse_mode)


def edit_message_caption(state: BotState, p: Params, uploads: dict[str, Upload]) -> Any:
    message, sent = _editable(state, p)
    if sent.kind == "text":
        raise BotApiError.bad_request("there is no caption in the message to edit")
    caption, parse_mode = p.string("caption"), p.string("parse_mode")
    plain, entities = render_text(caption, parse_mode, p.sequence("caption_entities"), caption=True)
    return _apply_edit(
        state, p, message, sent, "caption", caption or "", plain, entities, parse_mode
    )


def edit_message_reply_markup(state: BotState, p: Params, uploads: dict[str, Upload]) -> Any:
    message, sent = _editable(state, p)
    markup = _inline_markup(p)
    if markup == message.get("reply_markup"):
        raise BotApiError.bad_request(NOT_MODIFIED)
    edited = _with_markup({**message, "edit_date": state.now()}, markup)
    state.messages[(sent.chat_id, sent.message_id)] = edited
    sent.reply_markup = markup
    sent.markup_edits += 1
    return edited


def delete_message(state: BotState, p: Params, uploads: dict[str, Upload]) -> bool:
    chat_id, message_id = p.chat_id(), p.integer("message_id")
    state.chat(chat_id)
    state.stored(chat_id, message_id, action="delete")
    del state.messages[(chat_id, message_id)]
    sent = state.sent.get((chat_id, message_id))
    if sent is not None:
        sent.deleted = True
    return True


def send_chat_action(state: BotState, p: Params, uploads: dict[str, Upload]) -> bool:
    state.chat(p.chat_id())
    if p.string("action") not in CHAT_ACTIONS:
        raise BotApiError.bad_request("wrong parameter action in request")
    return True


# -- shared steps -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """Where a new message goes, checked before anything is stored."""

    chat_id: int
    chat: dict[str, Any]
    markup: dict[str, Any] | None
    """The ``reply_markup`` as sent (any kind), validated."""
    reply_to: dict[str, Any] | None


def _target(state: BotState, p: Params) -> _Target:
    chat_id = p.chat_id()
    chat = state.chat(chat_id)
    markup = p.mapping("reply_markup")
    if markup is not None:
        check_reply_markup(markup)
    return _Target(chat_id, chat, markup, _reply_target(state, p, chat_id))


def _store_sent(
    state: BotState, target: _Target, sent: SentMessage, content: dict[str, Any]
) -> dict[str, Any]:
    chat, markup, reply_to = target.chat, target.markup, target.reply_to
    sent.message_id = state.next_message_id(sent.chat_id)
    me = state.me()
    message: dict[str, Any] = {
        "message_id": sent.message_id,
        "from": {k: me[k] for k in ("id", "is_bot", "first_name", "username")},
        "chat": chat,
        "date": state.now(),
        **content,
    }
    if reply_to is not None:
        message["reply_to_message"] = reply_to
        sent.reply_to_message_id = reply_to["message_id"]
    inline = markup if markup is not None and "inline_keyboard" in markup else None
    message = _with_markup(message, inline)
    sent.reply_markup = markup
    state.messages[(sent.chat_id, sent.message_id)] = message
    state.sent[(sent.chat_id, sent.message_id)] = sent
    return message


def _inline_markup(p: Params) -> dict[str, Any] | None:
    """The validated ``reply_markup``; only inline keyboards stay on a message."""
    markup = p.mapping("reply_markup")
    if markup is None:
        return None
    check_reply_markup(markup)
    return markup if "inline_keyboard" in markup else None


def _with_markup(message: dict[str, Any], markup: dict[str, Any] | None) -> dict[str, Any]:
    message = {k: v for k, v in message.items() if k != "reply_markup"}
    if markup is not None:
        message["reply_markup"] = markup
    return message


def _reply_target(state: BotState, p: Params, chat_id: int) -> dict[str, Any] | None:
    reply = p.mapping("reply_parameters") or {}
    message_id = reply.get("message_id", p.optional_integer("reply_to_message_id"))
    if message_id is None:
        return None
    target_chat = reply.get("chat_id", chat_id)
    found = state.messages.get((target_chat, message_id))
    if found is None:
        lenient = reply.get("allow_sending_without_reply", p.flag("allow_sending_without_reply"))
        if lenient:
            return None
        raise BotApiError.bad_request("message to be replied not found")
    return {k: v for k, v in found.items() if k != "reply_to_message"}


def _editable(state: BotState, p: Params) -> tuple[dict[str, Any], SentMessage]:
    if p.has("inline_message_id"):
        raise BotApiError.bad_request("MESSAGE_ID_INVALID")
    chat_id, message_id = p.chat_id(), p.integer("message_id")
    state.chat(chat_id)
    message = state.stored(chat_id, message_id, action="edit")
    sent = state.sent.get((chat_id, message_id))
    if sent is None:
        raise BotApiError.bad_request("message can't be edited")
    return message, sent


def _apply_edit(
    state: BotState,
    p: Params,
    message: dict[str, Any],
    sent: SentMessage,
    field: str,
    raw: str,
    plain: str,
    entities: list[dict[str, Any]],
    parse_mode: str | None,
) -> dict[str, Any]:
    markup = _inline_markup(p)
    entities_field = "entities" if field == "text" else "caption_entities"
    unchanged = (
        message.get(field, "") == plain
        and message.get(entities_field, []) == entities
        and message.get("reply_markup") == markup
    )
    if unchanged:
        raise BotApiError.bad_request(NOT_MODIFIED)
    edited = {k: v for k, v in message.items() if k not in (field, entities_field)}
    if plain:
        edited[field] = plain
    if entities:
        edited[entities_field] = entities
    edited["edit_date"] = state.now()
    edited = _with_markup(edited, markup)
    state.messages[(sent.chat_id, sent.message_id)] = edited
    if field == "text":
        sent.text = raw
    else:
        sent.caption = raw
    sent.edits.append(raw)
    sent.parse_mode, sent.plain_text, sent.entities = parse_mode, plain, entities
    if markup != message.get("reply_markup"):
        sent.markup_edits += 1
    sent.reply_markup = markup
    return edited


def _media_bytes(
    kind: str, state: BotState, p: Params, uploads: dict[str, Upload]
) -> tuple[bytes, str | None]:
    upload = uploads.get(kind)
    if upload is not None:
        if not upload.data:
            raise BotApiError.bad_request("file must be non-empty")
        limit = MAX_PHOTO_BYTES if kind == "photo" else MAX_UPLOAD_BYTES
        if len(upload.data) > limit:
            raise BotApiError(413, "Request Entity Too Large")
        return upload.data, upload.filename
    reference = p.string(kind)
    if not reference:
        raise BotApiError.bad_request(f"there is no {kind} in the request")
    stored: StoredFile | None = state.files.get(reference)
    if stored is None:
        raise BotApiError.bad_request("wrong file identifier/HTTP URL specified")
    return stored.data, stored.file_name


def _media_content(
    kind: str, state: BotState, data: bytes, file_name: str | None, p: Params
) -> dict[str, Any]:
    name = file_name or kind
    mime = mimetypes.guess_type(name)[0]
    if kind == "photo":
        return photo_content(state, data)
    if kind == "document":
        return document_content(state, data, name, mime or "application/octet-stream")
    duration = p.integer("duration", 0)
    if kind == "voice":
        return voice_content(state, data, duration)
    folder, extension = ("music", "mp3") if kind == "audio" else ("videos", "mp4")
    stored = state.add_file(data, folder, extension, file_name=name, mime_type=mime)
    media: dict[str, Any] = {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "duration": duration,
        "file_name": name,
        "file_size": len(data),
    }
    if mime:
        media["mime_type"] = mime
    if kind == "video":
        width, height = image_size(b"")
        media["width"], media["height"] = p.integer("width", width), p.integer("height", height)
    return {kind: media}
