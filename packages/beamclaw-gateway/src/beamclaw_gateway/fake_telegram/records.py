"""What the fake Bot API records, for tests to assert on.

* :class:`Call` — one HTTP call to a Bot API method, decoded (answered or not).
* :class:`SentMessage` — a message the bot sent into a chat, with its edits and deletion.
* :class:`WebhookInfo` — the webhook registered by ``setWebhook``.
* :class:`CallbackAnswer` — an ``answerCallbackQuery``.
* :class:`StoredFile` — a file the fake holds (uploaded by the bot or pushed by a "user").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Call:
    """One Bot API call as the fake received it.

    ``params`` are decoded (raw strings if the token was refused): integers, booleans and the JSON-serialised fields
    (``reply_markup``, ``reply_parameters``, ``entities``, ``allowed_updates``, ``commands``…)
    are Python values, everything else is the string sent. ``files`` holds uploaded bytes,
    keyed by the parameter that references them (``photo``, ``document``), whether sent as
    ``attach://<part>`` (aiogram's way) or as a file part of that name.
    """

    method: str
    """The canonical method name (``sendMessage``), whatever case the URL used."""
    params: dict[str, Any]
    files: dict[str, bytes]
    at: float
    """``time.monotonic()`` when the request arrived."""
    status: int | None = None
    """HTTP status answered (None while the request is pending, e.g. a long poll)."""
    description: str | None = None
    """The error description answered, if the call failed."""


@dataclass
class SentMessage:
    """A message the bot sent, as it stands now.

    ``text``/``caption`` are what the bot sent, markup included (``"<b>hi</b>"``);
    ``plain_text`` is what Telegram shows after parsing. Edits replace ``text`` and append
    the new text to ``edits``; ``sent_text`` keeps the original.
    """

    chat_id: int
    message_id: int
    kind: str
    """``text``, ``photo``, ``document``, ``voice``, ``audio`` or ``video``."""
    text: str | None = None
    caption: str | None = None
    parse_mode: str | None = None
    plain_text: str = ""
    entities: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    reply_markup: dict[str, Any] | None = None
    """The markup as sent (inline or reply keyboard…); after an edit, the message's inline
    keyboard (None once an edit removed it)."""
    reply_to_message_id: int | None = None
    file: bytes | None = None
    file_name: str | None = None
    sent_text: str | None = None
    edits: list[str] = field(default_factory=list[str])
    markup_edits: int = 0
    """How many times ``editMessageReplyMarkup`` (or an edit with markup) changed it."""
    deleted: bool = False

    @property
    def photo(self) -> bytes | None:
        """The uploaded photo bytes (None unless ``kind == "photo"``)."""
        return self.file if self.kind == "photo" else None

    @property
    def document(self) -> bytes | None:
        """The uploaded document bytes (None unless ``kind == "document"``)."""
        return self.file if self.kind == "document" else None


@dataclass(frozen=True)
class WebhookInfo:
    """The registered webhook (``tg.webhook``; None when there is none)."""

    url: str
    secret_token: str | None = None
    allowed_updates: tuple[str, ...] | None = None
    max_connections: int = 40


@dataclass(frozen=True)
class CallbackAnswer:
    """One ``answerCallbackQuery``."""

    callback_query_id: str
    text: str | None = None
    show_alert: bool = False
    url: str | None = None
    cache_time: int = 0


@dataclass(frozen=True)
class StoredFile:
    """A file held by the fake, downloadable at ``{base}/file/bot{token}/{file_path}``."""

    file_id: str
    file_unique_id: str
    file_path: str
    data: bytes
    file_name: str | None = None
    mime_type: str | None = None

    def as_file(self) -> dict[str, Any]:
        """The Bot API ``File`` object (what ``getFile`` answers)."""
        return {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": len(self.data),
            "file_path": self.file_path,
        }
