"""A readable dump of a fake Bot API's state, for the message of a failed wait."""

from __future__ import annotations

import json
from typing import Any

from beamclaw_gateway.fake_telegram.records import Call
from beamclaw_gateway.fake_telegram.state import BotState

_LAST_CALLS = 30


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dump(base_url: str, calls: list[Call], state: BotState, polling: int) -> str:
    """Recent calls (method, status, params), queued updates, webhook and sent messages."""
    lines = [f"fake Telegram at {base_url} (bot @{state.bot_username})"]
    recent = calls[-_LAST_CALLS:]
    lines.append(f"calls ({len(calls)}, last {len(recent)}):")
    for call in recent:
        status = "pending" if call.status is None else str(call.status)
        files = f" files={sorted(call.files)}" if call.files else ""
        error = f" -> {call.description}" if call.description else ""
        lines.append(f"  {call.method} [{status}] {_short(call.params)}{files}{error}")
    lines.append(f"queued updates: {[u['update_id'] for u in state.updates]}")
    lines.append(f"webhook: {state.webhook}")
    lines.append(f"getUpdates waiting: {polling}")
    lines.append("bot messages:")
    for (chat_id, message_id), sent in sorted(state.sent.items()):
        flags = " deleted" if sent.deleted else ""
        flags += f" edits={len(sent.edits)}" if sent.edits else ""
        body = sent.text if sent.text is not None else f"[{sent.kind}] {sent.caption or ''}"
        lines.append(f"  chat {chat_id} #{message_id}{flags}: {_short(body, 100)}")
    return "\n".join(lines)
