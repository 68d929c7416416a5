"""Token estimation for when a provider reports no usage.

A deliberate heuristic (no tokenizer download): about four characters per token for text,
plus a fixed overhead per message and per tool definition, and a flat cost per image.
It over-estimates slightly on English prose, which is the safe side for context-window
checks. Estimated :class:`~beamclaw_core.messages.Usage` has ``estimated=True``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers.memo import MessageMemo
from beamclaw_core.providers.request_fold import TokenTotals
from beamclaw_tools import ToolDef

CHARS_PER_TOKEN = 4.0
MESSAGE_OVERHEAD_TOKENS = 4
TOOL_OVERHEAD_TOKENS = 8
IMAGE_TOKENS = 1_000


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` (0 for the empty string, at least 1 otherwise)."""
    if not text:
        return 0
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def count_message_tokens(message: Message) -> int:
    """Tokens one message costs in a prompt, tool calls and images included (computed)."""
    total = MESSAGE_OVERHEAD_TOKENS + estimate_tokens(message.text)
    if not message.shows_tool_images:  # (its images are counted with their tool results)
        total += IMAGE_TOKENS * len(message.images)
    for call in message.tool_calls:
        total += estimate_tokens(call.name) + estimate_tokens(
            call.raw_args if call.raw_args is not None else json.dumps(call.args)
        )
    if message.reasoning:
        total += estimate_tokens(message.reasoning)
    return total


message_tokens_memo = MessageMemo(count_message_tokens)
""":func:`count_message_tokens` of each message, derived once."""

prompt_token_totals = TokenTotals(message_tokens_memo)
"""The estimate of a whole request's messages, continued from the request before it."""


def estimate_message_tokens(message: Message) -> int:
    """Tokens one message costs in a prompt, tool calls and images included; computed
    once per message object (messages are frozen), so a prompt re-estimated on every
    call costs a lookup per message it had before."""
    return message_tokens_memo(message)


_tool_tokens: dict[int, tuple[ToolDef, int]] = {}
_TOOL_CACHE_SIZE = 4096


def estimate_tool_tokens(tool: ToolDef) -> int:
    """Tokens one tool definition costs, remembered per (immutable) definition object:
    the same definitions go out with every request, and encoding their schemas each
    time was most of this estimate's cost."""
    cached = _tool_tokens.get(id(tool))
    if cached is not None and cached[0] is tool:
        return cached[1]
    tokens = TOOL_OVERHEAD_TOKENS + estimate_tokens(
        tool.name + tool.description + json.dumps(tool.parameters)
    )
    if len(_tool_tokens) >= _TOOL_CACHE_SIZE:
        _tool_tokens.clear()
    _tool_tokens[id(tool)] = (tool, tokens)  # holding ``tool`` keeps its id unique
    return tokens


def estimate_prompt_tokens(messages: Sequence[Message], tools: Sequence[ToolDef] = ()) -> int:
    """Tokens of a whole request: every message plus every tool definition."""
    total = prompt_token_totals.total(messages)
    return total + sum(estimate_tool_tokens(tool) for tool in tools)


def estimate_usage(
    messages: Sequence[Message], reply: Message, tools: Sequence[ToolDef] = ()
) -> Usage:
    """An estimated :class:`Usage` for ``reply`` answering ``messages``."""
    prompt = estimate_prompt_tokens(messages, tools)
    completion = estimate_message_tokens(reply) - MESSAGE_OVERHEAD_TOKENS
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        estimated=True,
    )
