"""Incoming media: photos for vision models, documents into the agent's workspace, voice
and audio through an OpenAI-compatible ``/audio/transcriptions`` endpoint.

Invariants: nothing larger than ``max_file_bytes`` is downloaded (Telegram's declared
size is checked first, the bytes received again); a file name from Telegram never leaves
the target directory (only its last component, sanitised, is used, and an existing file
is never overwritten); every download goes through ``api_base_url``.
"""

from __future__ import annotations

import asyncio
import base64
import re
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from aiogram.methods import GetFile
from aiogram.types import Message, PhotoSize

from beamclaw_gateway.settings import TelegramSettings, TranscriptionSettings
from beamclaw_gateway.telegram.api import BotApi
from beamclaw_gateway.telegram.errors import TelegramChannelError
from beamclaw_gateway.telegram.updates import strip_mention
from beamclaw_tools import ContentPart, ImagePart, TextPart

INBOX = "telegram-files"
"""Directory, in the agent's workspace, documents sent on Telegram are saved to."""


NO_TRANSCRIPTION = (
    "I can't listen to voice messages here: no transcription endpoint is configured "
    "([gateway.channels.telegram.transcription] base_url). Please type it instead."
)


class MediaError(TelegramChannelError):
    """A file could not be taken in; ``reply`` says so to the sender."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        super().__init__(reply)


@dataclass(frozen=True, slots=True)
class Downloaded:
    data: bytes
    name: str
    mime: str | None


def largest_photo(sizes: list[PhotoSize], cap: int) -> PhotoSize | None:
    """The largest size whose declared file size fits ``cap`` (None: none does)."""
    fitting = [p for p in sizes if (p.file_size or 0) <= cap]
    return max(fitting, key=lambda p: p.width * p.height, default=None)


def safe_name(name: str | None, fallback: str) -> str:
    base = Path(name or "").name
    base = re.sub(r"[^\w.\- ]+", "_", base).strip(" .")
    return base[:120] or fallback


def unique_path(directory: Path, name: str) -> Path:
    path = directory / name
    stem, suffix, n = path.stem, path.suffix, 1
    while path.exists():
        n += 1
        path = directory / f"{stem}-{n}{suffix}"
    return path


async def download(api: BotApi, file_id: str, declared: int | None, cap: int) -> bytes:
    if declared is not None and declared > cap:
        raise MediaError(f"That file is too large ({declared:,} bytes; the limit is {cap:,}).")
    info = await api(GetFile(file_id=file_id))
    if info.file_size is not None and info.file_size > cap:
        raise MediaError(
            f"That file is too large ({info.file_size:,} bytes; the limit is {cap:,})."
        )
    if not info.file_path:
        raise MediaError("Telegram did not let me download that file.")
    data = await api.download(info.file_path)
    if len(data) > cap:
        raise MediaError(f"That file is too large (the limit is {cap:,} bytes).")
    return data


def image_part_data(data: bytes) -> tuple[str, str]:
    """``(media_type, base64)`` of a photo Telegram sent (always JPEG, PNG sniffed)."""
    media = "image/png" if data.startswith(b"\x89PNG") else "image/jpeg"
    return media, base64.b64encode(data).decode("ascii")


def save_document(directory: Path, data: bytes, name: str | None, message: Message) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = unique_path(directory, safe_name(name, f"file-{message.message_id}"))
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


async def transcribe(settings: TranscriptionSettings, data: bytes, filename: str) -> str:
    """The text of an audio file, from ``{base_url}/audio/transcriptions``."""
    if settings.base_url is None:
        raise MediaError(NO_TRANSCRIPTION)
    url = settings.base_url.rstrip("/") + "/audio/transcriptions"
    headers: dict[str, str] = {}
    if settings.api_key is not None:
        headers["Authorization"] = f"Bearer {settings.api_key.resolve('transcription api_key')}"
    form = aiohttp.FormData()
    form.add_field("model", settings.model)
    form.add_field("file", data, filename=filename, content_type="application/octet-stream")
    timeout = aiohttp.ClientTimeout(total=settings.timeout_seconds)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(url, data=form, headers=headers) as response,
        ):
            body = await response.json(content_type=None)
            if response.status != 200:
                raise MediaError(f"Transcription failed (HTTP {response.status}).")
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        raise MediaError(f"Transcription failed ({type(exc).__name__}).") from exc
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise MediaError("Transcription returned no text.")
    return text.strip()


async def message_content(
    api: BotApi,
    message: Message,
    settings: TelegramSettings,
    *,
    folder: Path,
    bot_username: str | None,
) -> str | tuple[ContentPart, ...] | None:
    """What the model is sent for ``message``: its text, a photo as an image, a document's
    place in the workspace (saved in ``folder``), a voice message's transcript; None for
    a kind the channel does not take. :class:`MediaError` carries the reply when a file is
    refused."""
    cap = settings.max_file_bytes
    caption = strip_mention(message.caption or "", bot_username)
    if message.text is not None:
        return strip_mention(message.text, bot_username) or message.text
    if message.photo:
        photo = largest_photo(message.photo, cap)
        if photo is None:
            raise MediaError(f"That photo is too large (the limit is {cap:,} bytes).")
        media, data = image_part_data(await download(api, photo.file_id, photo.file_size, cap))
        return (TextPart(text=caption or "(a photo)"), ImagePart(media_type=media, data=data))
    if message.document is not None:
        doc = message.document
        data = await download(api, doc.file_id, doc.file_size, cap)
        path = await asyncio.to_thread(save_document, folder, data, doc.file_name, message)
        note = f"[The user sent a file, saved in the workspace as {INBOX}/{path.name}"
        note += f" ({len(data):,} bytes, {doc.mime_type or 'unknown type'})]"
        return f"{note}\n{caption}".strip()
    audio = message.voice or message.audio
    if audio is not None:
        if settings.transcription.base_url is None:
            raise MediaError(NO_TRANSCRIPTION)
        data = await download(api, audio.file_id, audio.file_size, cap)
        heard = await transcribe(settings.transcription, data, "voice.ogg")
        return f"[voice message, transcribed]\n{heard}" + (f"\n{caption}" if caption else "")
    return None
