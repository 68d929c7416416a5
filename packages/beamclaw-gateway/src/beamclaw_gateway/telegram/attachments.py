"""Attachments of an answer (a tool's images and files) sent after its text.

Invariants: a file is read only when it is a regular file no larger than the cap (the
smaller of ``max_file_bytes`` and Telegram's upload limit, :data:`UPLOAD_LIMIT`), and no
more than cap + 1 bytes are ever read (a file that grew meanwhile is refused too); a file
that cannot be sent becomes a short note in the chat saying which and why, never a silent
drop and never a failure of the answer it follows. Attachments are best effort: sent
once the answer's text was taken, not persisted.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Sequence
from pathlib import Path

from loguru import logger

from beamclaw_core.attachments import human_size
from beamclaw_gateway.telegram.errors import TelegramSendError, TelegramTokenRejectedError
from beamclaw_gateway.telegram.render import Chunk
from beamclaw_gateway.telegram.send import TextSender
from beamclaw_tools import ContentPart, FilePart, ImagePart

UPLOAD_LIMIT = 50 * 1024 * 1024
"""The largest file a bot may send (``sendDocument`` and friends)."""


def too_large(part: FilePart, size: int, cap: int) -> str:
    return (
        f"📎 {part.name} was not sent: it is {human_size(size)}, over the {human_size(cap)} limit."
    )


def read_file(part: FilePart, cap: int) -> bytes | str:
    """The bytes of ``part``'s file, or the note saying why it is not sent."""
    path = Path(part.path)
    try:
        if not path.is_file():
            return f"📎 {part.name} was not sent: the file is no longer there."
        size = path.stat().st_size
        if size > cap:
            return too_large(part, size, cap)
        with path.open("rb") as f:
            data = f.read(cap + 1)
    except OSError as exc:
        return f"📎 {part.name} was not sent: {exc.strerror or exc}."
    if len(data) > cap:
        return too_large(part, len(data), cap)
    return data


async def send_attachments(
    sender: TextSender,
    chat_id: int,
    parts: Sequence[ContentPart | FilePart],
    *,
    max_file_bytes: int,
) -> tuple[int, ...]:
    """Send ``parts`` (images as photos, files by kind, a note for each that cannot go);
    the ids of the messages sent."""
    cap = min(max_file_bytes, UPLOAD_LIMIT)
    ids: list[int] = []
    for part in parts:
        try:
            if isinstance(part, ImagePart):
                ids.append(await sender.photo(chat_id, part))
            elif isinstance(part, FilePart):
                found = await asyncio.to_thread(read_file, part, cap)
                if isinstance(found, bytes):
                    ids.append(await sender.file(chat_id, part, found))
                else:
                    ids.append(await sender.send(chat_id, Chunk(html.escape(found), found)))
        except TelegramTokenRejectedError:
            raise
        except TelegramSendError as exc:
            logger.warning("telegram: an attachment to chat {} not sent: {}", chat_id, exc)
    return tuple(ids)
