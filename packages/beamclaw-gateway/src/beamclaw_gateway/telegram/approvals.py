"""Approval prompts as inline buttons.

Telegram limits ``callback_data`` to 64 bytes, so a button never carries the request id:
each prompt gets a short random id (8 characters), and the button's data is
``ap:<short>:<y|n|a>`` (at most 13 bytes). The map lives in memory: after a restart a
resumed turn asks again, with new buttons, and an old button is answered "expired".
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Literal

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from beamclaw_core.loop import ApprovalRequested

Decision = Literal["yes", "no", "always"]
_CODES: dict[str, Decision] = {"y": "yes", "n": "no", "a": "always"}
PREFIX = "ap"
MAX_KEPT = 256


@dataclass
class Prompt:
    request_id: str
    tool: str
    chat_id: int
    message_id: int | None = None
    decided: str | None = field(default=None)


def prompt_text(request: ApprovalRequested) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in list(request.args.items())[:6])
    if len(args) > 600:
        args = args[:600] + "…"
    wait = f" (waiting {request.timeout_seconds:g} s)" if request.timeout_seconds else ""
    return (
        f"🔐 **Approval needed**: `{request.tool}`\n{args}\n\n"
        f"Approve, deny, or always allow{wait}. You can also answer /yes /no /always."
    )


class ApprovalButtons:
    """Short ids for the approval prompts shown (see the module docstring)."""

    def __init__(self) -> None:
        self._prompts: dict[str, Prompt] = {}

    def add(self, request: ApprovalRequested, chat_id: int) -> str:
        short = secrets.token_urlsafe(6)[:8]
        self._prompts[short] = Prompt(request.request_id, request.tool, chat_id)
        while len(self._prompts) > MAX_KEPT:
            self._prompts.pop(next(iter(self._prompts)))
        return short

    def get(self, short: str) -> Prompt | None:
        return self._prompts.get(short)

    def of_request(self, request_id: str) -> list[Prompt]:
        return [p for p in self._prompts.values() if p.request_id == request_id]

    @staticmethod
    def keyboard(short: str) -> InlineKeyboardMarkup:
        def button(label: str, code: str) -> InlineKeyboardButton:
            data = f"{PREFIX}:{short}:{code}"
            assert len(data.encode()) <= 64
            return InlineKeyboardButton(text=label, callback_data=data)

        return InlineKeyboardMarkup(
            inline_keyboard=[
                [button("✅ Approve", "y"), button("❌ Deny", "n"), button("♾ Always", "a")]
            ]
        )

    @staticmethod
    def parse(data: str | None) -> tuple[str, Decision] | None:
        parts = (data or "").split(":")
        if len(parts) != 3 or parts[0] != PREFIX or parts[2] not in _CODES:
            return None
        return parts[1], _CODES[parts[2]]
