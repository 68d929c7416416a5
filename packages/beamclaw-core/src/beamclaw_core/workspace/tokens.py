"""A fast, dependency-free token estimate.

Exact counts need the model's own tokenizer, which BeamClaw cannot load offline for every
provider (tiktoken downloads its vocabularies at first use, and covers OpenAI models
only). The estimate used everywhere a count is shown or budgeted is **one token per four
bytes of UTF-8**: about four characters per token for English and code (the usual BPE
ratio), fewer characters per token for Cyrillic, Greek (two bytes each) and CJK (three
bytes each), which matches how BPE vocabularies treat those scripts. Counts are rounded up.

Invariants: deterministic; ``estimate_tokens("") == 0``; monotone in appended text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from beamclaw_core.messages import Message
from beamclaw_tools import ToolDef

BYTES_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
"""Role and delimiters around every chat message."""
TOOL_OVERHEAD_TOKENS = 8
"""Framing of one function definition in a request."""
IMAGE_TOKENS = 800
"""A typical image (about 1 megapixel at high detail)."""


def estimate_tokens(text: str) -> int:
    """Tokens in ``text``: ``ceil(utf8_bytes / 4)``."""
    size = len(text.encode("utf-8"))
    return -(-size // BYTES_PER_TOKEN)


def estimate_message_tokens(message: Message) -> int:
    """Tokens one message costs in a request: text, images, tool calls and framing."""
    total = MESSAGE_OVERHEAD_TOKENS + estimate_tokens(message.text)
    total += IMAGE_TOKENS * len(message.images)
    for call in message.tool_calls:
        arguments = call.raw_args if call.raw_args is not None else json.dumps(call.args)
        total += estimate_tokens(call.id) + estimate_tokens(call.name) + estimate_tokens(arguments)
    if message.name:
        total += estimate_tokens(message.name)
    return total


def estimate_messages_tokens(messages: Iterable[Message]) -> int:
    """Sum of :func:`estimate_message_tokens`."""
    return sum(estimate_message_tokens(m) for m in messages)


def estimate_tool_tokens(tool: ToolDef) -> int:
    """Tokens one tool definition costs: name, description, JSON-schema parameters."""
    schema = json.dumps(tool.parameters, separators=(",", ":"), sort_keys=True)
    return (
        TOOL_OVERHEAD_TOKENS
        + estimate_tokens(tool.name)
        + estimate_tokens(tool.description)
        + estimate_tokens(schema)
    )
