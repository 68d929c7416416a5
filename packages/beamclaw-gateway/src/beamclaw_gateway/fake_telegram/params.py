"""Decoding Bot API parameters the way Telegram does, from any of its request encodings.

Telegram takes parameters from the query string, ``application/x-www-form-urlencoded``,
``application/json`` or ``multipart/form-data`` (aiogram sends form bodies: urlencoded
without files, multipart with them; every non-string value is JSON-encoded, and falsy
values such as ``0``/``False``/``""`` are left out). :func:`decode_params` turns the
strings into Python values by parameter name: known integers and booleans are converted,
known JSON fields are parsed, everything else stays a string. A malformed value is a 400.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from beamclaw_gateway.fake_telegram.errors import BotApiError

INT_PARAMS = frozenset(
    {
        "offset",
        "limit",
        "timeout",
        "message_id",
        "from_chat_id",
        "user_id",
        "reply_to_message_id",
        "message_thread_id",
        "max_connections",
        "duration",
        "width",
        "height",
        "cache_time",
    }
)
BOOL_PARAMS = frozenset(
    {
        "disable_notification",
        "protect_content",
        "drop_pending_updates",
        "show_alert",
        "allow_sending_without_reply",
        "disable_web_page_preview",
        "has_spoiler",
        "disable_content_type_detection",
        "allow_paid_broadcast",
        "supports_streaming",
        "show_caption_above_media",
    }
)
JSON_PARAMS = frozenset(
    {
        "reply_markup",
        "reply_parameters",
        "entities",
        "caption_entities",
        "allowed_updates",
        "commands",
        "scope",
        "link_preview_options",
        "media",
    }
)


def decode_params(raw: dict[str, Any]) -> dict[str, Any]:
    """Typed parameters from raw ones (strings from a form, or values from a JSON body).

    ``chat_id`` becomes an int unless it is a ``@channelusername``.

    Raises:
        BotApiError: 400 for a value that is not of its parameter's type.
    """
    return {name: _decode(name, value) for name, value in raw.items()}


def _decode(name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if name == "chat_id":
        return value if value.startswith("@") else _int(name, value)
    if name in INT_PARAMS:
        return _int(name, value)
    if name in BOOL_PARAMS:
        lowered = value.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0", ""):
            return False
        raise BotApiError.bad_request(f"invalid {name} specified")
    if name in JSON_PARAMS:
        try:
            return json.loads(value)
        except ValueError:
            what = "reply keyboard markup" if name == "reply_markup" else name
            raise BotApiError.bad_request(f"can't parse {what} JSON object") from None
    return value


def _int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        if name == "chat_id":
            raise BotApiError.bad_request("chat not found") from None
        raise BotApiError.bad_request(f"invalid {name} specified") from None


class Params:
    """Typed access to one call's decoded parameters; a wrong or missing value is a 400."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def has(self, name: str) -> bool:
        return self.values.get(name) not in (None, "")

    def integer(self, name: str, default: int | None = None) -> int:
        value = self.values.get(name)
        if value is None:
            if default is None:
                raise BotApiError.bad_request(f"{name} is empty")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise BotApiError.bad_request(f"invalid {name} specified")
        return value

    def optional_integer(self, name: str) -> int | None:
        return self.integer(name) if self.values.get(name) is not None else None

    def string(self, name: str) -> str | None:
        value = self.values.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise BotApiError.bad_request(f"invalid {name} specified")
        return value

    def flag(self, name: str) -> bool:
        value = self.values.get(name)
        return bool(value) if isinstance(value, bool | int) else False

    def mapping(self, name: str) -> dict[str, Any] | None:
        value = self.values.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise BotApiError.bad_request(f"can't parse {name} JSON object")
        return dict(value)

    def sequence(self, name: str) -> list[Any] | None:
        value = self.values.get(name)
        if value is None:
            return None
        if not isinstance(value, list):
            raise BotApiError.bad_request(f"can't parse {name} JSON array")
        return list(value)

    def chat_id(self) -> int:
        """The target chat: an integer id (``@username`` chats do not exist in the fake)."""
        value = self.values.get("chat_id")
        if value is None or value == "":
            raise BotApiError.bad_request("chat_id is empty")
        if isinstance(value, bool) or not isinstance(value, int):
            raise BotApiError.bad_request("chat not found")
        return value


@dataclass(frozen=True)
class Upload:
    """One uploaded file part: the multipart filename, bytes and content type."""

    filename: str
    data: bytes
    content_type: str | None = None


def resolve_uploads(params: dict[str, Any], parts: dict[str, Upload]) -> dict[str, Upload]:
    """Uploads keyed by the parameter naming them: ``photo="attach://k"`` takes part ``k``;
    a part named like a parameter (``photo``) is taken as-is."""
    resolved: dict[str, Upload] = {}
    referenced: set[str] = set()
    for name, value in params.items():
        if isinstance(value, str) and value.startswith("attach://"):
            key = value.removeprefix("attach://")
            if key in parts:
                resolved[name] = parts[key]
                referenced.add(key)
    for name, part in parts.items():
        if name not in referenced and name not in resolved:
            resolved[name] = part
    return resolved
