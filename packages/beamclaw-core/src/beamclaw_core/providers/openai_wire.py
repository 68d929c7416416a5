"""The OpenAI Chat Completions wire format, both directions (sans-IO).

Requests: system/user/assistant/tool messages; assistant ``tool_calls`` (``arguments`` is
the JSON text, or the model's original malformed text when it had one); tool messages with
``tool_call_id`` and ``name`` and their text only (the wire's tool messages cannot hold
images: the user message the history adds after the block shows them,
:func:`~beamclaw_core.loop.history.tool_images_message`); multimodal user content as
``text``/``image_url`` parts with ``data:`` URLs, or, for a model that cannot see images,
a note in each image's place; tools as ``function`` definitions.

Responses: ``choices[0].message`` (``content``, ``tool_calls``, ``reasoning`` or
``reasoning_content``), ``finish_reason`` and ``usage`` (with cached and reasoning token
details). Streams: ``choices[0].delta`` fragments; tool-call fragments carry an ``index``
(position in the list when a server omits it); the usage-only chunk that
``stream_options.include_usage`` adds; ``data: [DONE]``; in-band ``{"error": …}`` objects.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson

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
from beamclaw_core.providers.request_fold import JoinedEncodings
from beamclaw_core.providers.sse import ServerSentEvent
from beamclaw_tools import ImagePart, TextPart, ToolCall, ToolDef

_FINISH = {"function_call": "tool_calls", "eos": "stop", "end_turn": "stop"}


def image_data_url(part: ImagePart) -> str:
    """``data:<media type>;base64,<data>``."""
    return f"data:{part.media_type};base64,{part.data}"


def _arguments(call: ToolCall) -> str:
    return call.raw_args if call.raw_args is not None else json.dumps(call.args)


def to_openai_message(message: Message) -> dict[str, Any]:
    """One :class:`Message` in Chat Completions form."""
    role = message.role
    if role is Role.TOOL:
        out: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.text,
        }
        if message.name:
            out["name"] = message.name
        return out
    if role is Role.ASSISTANT:
        out = {"role": "assistant", "content": message.text or None}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments(c)},
                }
                for c in message.tool_calls
            ]
        elif out["content"] is None:
            out["content"] = ""
        return out
    if isinstance(message.content, str):
        return {"role": role.value, "content": message.content}
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        else:
            parts.append({"type": "image_url", "image_url": {"url": image_data_url(part)}})
    return {"role": role.value, "content": parts}


def encoded_openai_message(message: Message) -> bytes:
    """:func:`to_openai_message`, encoded (``orjson.dumps``)."""
    return orjson.dumps(to_openai_message(message))


def encoded_openai_text_message(message: Message) -> bytes:
    """:func:`encoded_openai_message` for a model that cannot see images: each image a
    note (:func:`~beamclaw_core.attachments.as_text_only`)."""
    return encoded_openai_message(as_text_only(message))


openai_message_memo = MessageMemo(encoded_openai_message)
""":func:`encoded_openai_message` of each message, derived once: a request about a long
history neither rebuilds nor re-encodes the messages it sent before."""

openai_messages = JoinedEncodings(openai_message_memo)
"""A request's ``messages`` array, already encoded (:meth:`JoinedEncodings.array`):
``orjson.dumps`` of the body embeds it verbatim, byte for byte what encoding the dicts
there would give, and a request continuing an earlier one copies that one's bytes
instead of joining a piece per message."""

openai_text_message_memo = MessageMemo(encoded_openai_text_message)
openai_text_messages = JoinedEncodings(openai_text_message_memo)
""":data:`openai_messages` for models that cannot see images (their own derived forms,
cached the same way)."""


def openai_request_messages(*, vision: bool) -> JoinedEncodings:
    """The fold a request's ``messages`` array is built with (images, or notes)."""
    return openai_messages if vision else openai_text_messages


def to_openai_tool(tool: ToolDef) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


_TOOL_ARRAYS = 64
"""Encoded ``tools`` arrays kept (one per policy's list of definitions, in practice)."""
_tool_arrays: dict[tuple[int, ...], tuple[tuple[ToolDef, ...], orjson.Fragment]] = {}


def encoded_openai_tools(tools: Sequence[ToolDef]) -> orjson.Fragment:
    """``[to_openai_tool(t) for t in tools]``, encoded once per list of definitions.

    Keyed by the definitions' identities: they are frozen, and a registry hands out the
    same objects until its tools change (``estimate_tool_tokens`` assumes the same); an
    entry holds its definitions, so their ids stay theirs. The same bytes as encoding
    the dicts, without building and encoding seventeen schemas per request.
    """
    key = tuple(map(id, tools))
    cached = _tool_arrays.get(key)
    if cached is None:
        held = tuple(tools)
        cached = (held, orjson.Fragment(orjson.dumps([to_openai_tool(t) for t in held])))
        if len(_tool_arrays) >= _TOOL_ARRAYS:
            _tool_arrays.clear()
        _tool_arrays[key] = cached
    return cached[1]


def tool_choice(choice: str | None) -> Any:
    """``auto``/``none``/``required`` pass through; another value names a function."""
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def parse_usage(data: Any) -> Usage | None:
    """Usage from an OpenAI ``usage`` object (OpenRouter's ``cost`` kept when present)."""
    if not isinstance(data, dict):
        return None
    u: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
    prompt = int(u.get("prompt_tokens") or 0)
    completion = int(u.get("completion_tokens") or 0)
    total = int(u.get("total_tokens") or prompt + completion)
    pdet = u.get("prompt_tokens_details")
    cdet = u.get("completion_tokens_details")
    cached = int(pdet.get("cached_tokens") or 0) if isinstance(pdet, dict) else 0
    reasoning = int(cdet.get("reasoning_tokens") or 0) if isinstance(cdet, dict) else 0
    cost = u.get("cost")
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cached_tokens=cached,
        reasoning_tokens=reasoning,
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


def _decode_args(raw: str) -> tuple[dict[str, Any], str | None]:
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, raw
    return (dict(value), None) if isinstance(value, dict) else ({}, raw)  # pyright: ignore[reportUnknownArgumentType]


def normalise_finish(reason: Any) -> str:
    if not isinstance(reason, str) or not reason:
        return "stop"
    return _FINISH.get(reason, reason)


def in_band_error(
    data: dict[str, Any], provider: str, model: str, secret: str | None
) -> ProviderError | None:
    """A ``{"error": …}`` object sent inside a 200 response or stream, classified."""
    if "error" not in data or data.get("choices"):
        return None
    etype, message = error_fields(data)
    text = safe_text(message or json.dumps(data.get("error")), secret)
    kind = kind_for_error_type(etype, text)
    code = data["error"].get("code") if isinstance(data["error"], dict) else None
    if isinstance(code, int):
        if code == 429:
            kind = ErrorKind.RATE_LIMIT
        elif code in (401, 403):
            kind = ErrorKind.AUTH
        elif code >= 500:
            kind = ErrorKind.NETWORK
    return ProviderError(
        kind, text, provider=provider, model=model, status=code if isinstance(code, int) else None
    )


def parse_openai_completion(
    data: Any, *, provider: str, model: str, id_factory: IdFactory, secret: str | None = None
) -> Completion:
    """A whole Chat Completions response → :class:`Completion` (usage may be None)."""
    if not isinstance(data, dict):
        raise ProviderError(
            ErrorKind.UNKNOWN, "response is not a JSON object", provider=provider, model=model
        )
    body: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
    err = in_band_error(body, provider, model, secret)
    if err is not None:
        raise err
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError(
            ErrorKind.UNKNOWN, "response has no choices", provider=provider, model=model
        )
    choice: dict[str, Any] = choices[0]
    msg = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    assert isinstance(msg, dict)
    m: dict[str, Any] = dict(msg)  # pyright: ignore[reportUnknownArgumentType]
    content = m.get("content")
    text = content if isinstance(content, str) else ""
    reasoning = m.get("reasoning") or m.get("reasoning_content")
    calls: list[ToolCall] = []
    raw_calls = m.get("tool_calls")
    for i, item in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        if not isinstance(item, dict):
            continue
        fn = item.get("function") if isinstance(item.get("function"), dict) else {}
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not name:
            continue
        raw_args = fn.get("arguments") if isinstance(fn, dict) else None
        if isinstance(raw_args, dict):
            args, bad = dict(raw_args), None  # pyright: ignore[reportUnknownArgumentType]
            raw_text = canonical_args(args)
        else:
            raw_text = raw_args if isinstance(raw_args, str) else ""
            args, bad = _decode_args(raw_text)
        call_id = item.get("id")
        calls.append(
            ToolCall(
                id=call_id
                if isinstance(call_id, str) and call_id
                else id_factory(i, name, raw_text),
                name=name,
                args=args,
                raw_args=bad,
            )
        )
    answered = body.get("model") if isinstance(body.get("model"), str) else model
    message = Message(
        role=Role.ASSISTANT,
        content=text,
        tool_calls=tuple(calls),
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        usage=parse_usage(body.get("usage")),
        model=answered,
    )
    reason = "tool_calls" if calls else normalise_finish(choice.get("finish_reason"))
    return Completion(message=message, finish_reason=reason, model=answered, provider=provider)


class OpenAIStreamDecoder:
    """Interprets Chat Completions stream events (see module docstring)."""

    def __init__(self, *, provider: str, model: str, secret: str | None = None) -> None:
        self._provider = provider
        self._model = model
        self._secret = secret
        self.done = False
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None

    def feed(self, event: ServerSentEvent) -> list[StreamChunk]:
        data = event.data.strip()
        if data == "[DONE]":
            self.done = True
            return []
        body = stream_json_object(
            data, provider=self._provider, model=self._model, secret=self._secret
        )
        if body is None:
            return []
        err = in_band_error(body, self._provider, self._model, self._secret)
        if err is not None:
            raise err
        if isinstance(body.get("model"), str) and body["model"]:
            self.model = body["model"]
        usage = parse_usage(body.get("usage"))
        if usage is not None:
            self.usage = usage
        out: list[StreamChunk] = []
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return out
        choice: dict[str, Any] = choices[0]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            d: dict[str, Any] = dict(delta)  # pyright: ignore[reportUnknownArgumentType]
            reasoning = d.get("reasoning") or d.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                out.append(ReasoningDelta(text=reasoning))
            content = d.get("content")
            if isinstance(content, str) and content:
                out.append(TextDelta(text=content))
            calls = d.get("tool_calls")
            for pos, item in enumerate(calls if isinstance(calls, list) else []):
                if not isinstance(item, dict):
                    continue
                index = item.get("index")
                fn = item.get("function") if isinstance(item.get("function"), dict) else {}
                assert isinstance(fn, dict)
                name = fn.get("name")
                args = fn.get("arguments")
                call_id = item.get("id")
                out.append(
                    ToolCallDelta(
                        index=index if isinstance(index, int) else pos,
                        id=call_id if isinstance(call_id, str) and call_id else None,
                        name=name if isinstance(name, str) and name else None,
                        arguments=args
                        if isinstance(args, str)
                        else (json.dumps(args) if isinstance(args, dict) else ""),
                    )
                )
        if choice.get("finish_reason"):
            self.finish_reason = normalise_finish(choice["finish_reason"])
        return out
