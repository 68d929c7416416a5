"""The Anthropic Messages wire format, both directions (sans-IO).

Requests: every system message becomes a ``system`` text block (in order); the leading run
of system messages is the stable prefix (bootstrap files, instructions) and its last block
carries ``cache_control: ephemeral`` when prompt caching is on, as does the last tool.
Assistant messages become ``thinking`` (replayed only with its signature), ``text`` and
``tool_use`` blocks; consecutive tool messages become one user message of ``tool_result``
blocks (``is_error`` kept; a result's images as base64 ``image`` blocks inside it, so the
user message that shows them on other wires sends nothing here); user images become
base64 ``image`` blocks; for a model that cannot see images each image is a note
instead. Consecutive
messages of the same role are merged, because the API requires alternation.

Responses: ``text`` blocks are the answer; ``thinking`` blocks go to ``reasoning`` (never
the text) with their signature in ``meta["reasoning_signature"]``; ``tool_use`` blocks are
tool calls. Stop reasons map to ``stop``/``tool_calls``/``length``/``content_filter``.
Usage: ``prompt_tokens`` = input + cache read + cache creation; ``cached_tokens`` = cache read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from beamclaw_core.attachments import as_text_only
from beamclaw_core.messages import Message, Role, Usage
from beamclaw_core.parsing import IdFactory, canonical_args
from beamclaw_core.providers.base import (
    Completion,
    ErrorKind,
    ProviderError,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
)
from beamclaw_core.providers.classify import (
    error_fields,
    kind_for_error_type,
    safe_text,
    stream_json_object,
)
from beamclaw_core.providers.memo import MessageMemo
from beamclaw_core.providers.sse import ServerSentEvent
from beamclaw_tools import TextPart, ToolCall, ToolDef

CACHE = {"type": "ephemeral"}
_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
    "pause_turn": "stop",
}


def normalise_stop(reason: Any) -> str:
    return _STOP.get(reason, reason) if isinstance(reason, str) and reason else "stop"


def system_blocks(messages: list[Message], *, cache: bool) -> list[dict[str, Any]]:
    """The ``system`` parameter: one text block per system message, cache marker on the
    last block of the leading (stable) run."""
    blocks: list[dict[str, Any]] = []
    leading = 0
    still_leading = True
    for m in messages:
        if m.role is Role.SYSTEM:
            if m.text:
                blocks.append({"type": "text", "text": m.text})
                if still_leading:
                    leading = len(blocks)
        else:
            still_leading = False
    if cache and leading:
        blocks[leading - 1] = {**blocks[leading - 1], "cache_control": CACHE}
    return blocks


def _user_content(message: Message) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}] if message.content else []
    out: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        else:
            out.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": part.media_type, "data": part.data},
                }
            )
    return out


def _assistant_content(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    signature = message.meta.get("reasoning_signature")
    if message.reasoning and isinstance(signature, str) and signature:
        out.append({"type": "thinking", "thinking": message.reasoning, "signature": signature})
    if message.text:
        out.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        out.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.args})
    return out


def anthropic_turn(message: Message) -> tuple[str, list[dict[str, Any]]]:
    """The role and content blocks of one message (no blocks: it sends nothing here;
    system messages go to :func:`system_blocks`)."""
    if message.role is Role.SYSTEM:
        return "system", []
    if message.role is Role.TOOL:
        role = "user"
        blocks: list[dict[str, Any]] = [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": _user_content(message) if message.images else message.text,
                **({"is_error": True} if message.is_error else {}),
            }
        ]
    elif message.shows_tool_images:  # the tool results above hold the images already
        return "user", []
    elif message.role is Role.ASSISTANT:
        role = "assistant"
        blocks = _assistant_content(message)
    else:
        role = "user"
        blocks = _user_content(message)
    return role, blocks


def anthropic_text_turn(message: Message) -> tuple[str, list[dict[str, Any]]]:
    """:func:`anthropic_turn` for a model that cannot see images: each image a note."""
    return anthropic_turn(as_text_only(message))


anthropic_turn_memo = MessageMemo(anthropic_turn)
""":func:`anthropic_turn` of each message, derived once (its blocks are shared: copy the
list before extending it, never mutate a block)."""
anthropic_text_turn_memo = MessageMemo(anthropic_text_turn)
""":func:`anthropic_text_turn` of each message, derived once."""


def to_anthropic_messages(
    messages: list[Message],
    *,
    turn_of: Callable[[Message], tuple[str, list[dict[str, Any]]]] = anthropic_turn_memo,
) -> list[dict[str, Any]]:
    """Non-system messages as alternating user/assistant turns of content blocks.

    ``turn_of``: each message's blocks (memoised by default; the same blocks either way).
    """
    turns: list[dict[str, Any]] = []
    for role, blocks in map(turn_of, messages):
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})
    return turns


def to_anthropic_tools(tools: tuple[ToolDef, ...], *, cache: bool) -> list[dict[str, Any]]:
    out = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]
    if cache and out:
        out[-1] = {**out[-1], "cache_control": CACHE}
    return out


def tool_choice(choice: str) -> dict[str, Any]:
    if choice == "required":
        return {"type": "any"}
    if choice in ("auto", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice}


def parse_usage(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    u: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
    fresh = int(u.get("input_tokens") or 0)
    read = int(u.get("cache_read_input_tokens") or 0)
    write = int(u.get("cache_creation_input_tokens") or 0)
    output = int(u.get("output_tokens") or 0)
    prompt = fresh + read + write
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=output,
        total_tokens=prompt + output,
        cached_tokens=read,
    )


def anthropic_error(
    data: Any, provider: str, model: str, secret: str | None = None
) -> ProviderError:
    etype, message = error_fields(data)
    text = safe_text(message or json.dumps(data), secret)
    return ProviderError(kind_for_error_type(etype, text), text, provider=provider, model=model)


def parse_anthropic_completion(
    data: Any, *, provider: str, model: str, id_factory: IdFactory
) -> Completion:
    if not isinstance(data, dict):
        raise ProviderError(
            ErrorKind.UNKNOWN, "response is not a JSON object", provider=provider, model=model
        )
    body: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
    if body.get("type") == "error":
        raise anthropic_error(body, provider, model)
    content = body.get("content")
    if not isinstance(content, list):
        raise ProviderError(
            ErrorKind.UNKNOWN, "response has no content blocks", provider=provider, model=model
        )
    texts: list[str] = []
    thoughts: list[str] = []
    signature: str | None = None
    calls: list[ToolCall] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        b: dict[str, Any] = dict(block)  # pyright: ignore[reportUnknownArgumentType]
        kind = b.get("type")
        if kind == "text" and isinstance(b.get("text"), str):
            texts.append(b["text"])
        elif kind == "thinking" and isinstance(b.get("thinking"), str):
            thoughts.append(b["thinking"])
            if isinstance(b.get("signature"), str):
                signature = b["signature"]
        elif kind == "tool_use" and isinstance(b.get("name"), str):
            raw_input = b.get("input")
            args: dict[str, Any] = dict(raw_input) if isinstance(raw_input, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
            call_id = b.get("id")
            calls.append(
                ToolCall(
                    id=call_id
                    if isinstance(call_id, str) and call_id
                    else id_factory(len(calls), b["name"], canonical_args(args)),
                    name=b["name"],
                    args=args,
                )
            )
    answered = body.get("model") if isinstance(body.get("model"), str) else model
    message = Message(
        role=Role.ASSISTANT,
        content="".join(texts),
        tool_calls=tuple(calls),
        reasoning="".join(thoughts) or None,
        usage=parse_usage(body.get("usage")),
        model=answered,
        meta={"reasoning_signature": signature} if signature else {},
    )
    reason = "tool_calls" if calls else normalise_stop(body.get("stop_reason"))
    return Completion(message=message, finish_reason=reason, model=answered, provider=provider)


class AnthropicStreamDecoder:
    """Interprets Messages stream events. Tool calls are numbered 0, 1, … in block order
    (content-block indices also count text and thinking blocks)."""

    def __init__(self, *, provider: str, model: str) -> None:
        self._provider = provider
        self._model = model
        self._tool_index: dict[int, int] = {}
        self._input_usage: dict[str, Any] = {}
        self._output_tokens = 0
        self.done = False
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None

    def feed(self, event: ServerSentEvent) -> list[StreamChunk]:
        d = stream_json_object(event.data, provider=self._provider, model=self._model)
        if d is None:
            return []
        kind = d.get("type", event.event)
        if kind == "error":
            raise anthropic_error(d, self._provider, self._model)
        if kind == "message_start" and isinstance(d.get("message"), dict):
            msg: dict[str, Any] = d["message"]
            if isinstance(msg.get("model"), str):
                self.model = msg["model"]
            if isinstance(msg.get("usage"), dict):
                self._input_usage = dict(msg["usage"])
            return []
        if kind == "content_block_start" and isinstance(d.get("content_block"), dict):
            block: dict[str, Any] = d["content_block"]
            index = int(d.get("index") or 0)
            if block.get("type") == "tool_use":
                position = len(self._tool_index)
                self._tool_index[index] = position
                return [ToolCallDelta(index=position, id=block.get("id"), name=block.get("name"))]
            if block.get("type") == "text" and block.get("text"):
                return [TextDelta(text=block["text"])]
            return []
        if kind == "content_block_delta" and isinstance(d.get("delta"), dict):
            delta: dict[str, Any] = d["delta"]
            dtype = delta.get("type")
            if dtype == "text_delta" and delta.get("text"):
                return [TextDelta(text=delta["text"])]
            if dtype == "thinking_delta" and delta.get("thinking"):
                return [ReasoningDelta(text=delta["thinking"])]
            if dtype == "signature_delta" and delta.get("signature"):
                return [ReasoningDelta(text="", signature=delta["signature"])]
            if dtype == "input_json_delta":
                index = int(d.get("index") or 0)
                position = self._tool_index.get(index)
                if position is not None and delta.get("partial_json"):
                    return [ToolCallDelta(index=position, arguments=delta["partial_json"])]
            return []
        if kind == "message_delta":
            delta_md = d.get("delta")
            if isinstance(delta_md, dict) and delta_md.get("stop_reason"):
                self.finish_reason = normalise_stop(delta_md["stop_reason"])
            usage = d.get("usage")
            if isinstance(usage, dict) and usage.get("output_tokens") is not None:
                self._output_tokens = int(usage["output_tokens"])
            return []
        if kind == "message_stop":
            self.done = True
            if self._input_usage or self._output_tokens:
                self.usage = parse_usage(
                    {**self._input_usage, "output_tokens": self._output_tokens}
                )
            if self.finish_reason is None:
                self.finish_reason = "stop"
        return []
