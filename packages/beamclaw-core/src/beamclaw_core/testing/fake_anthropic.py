"""A fake Anthropic Messages server: ``POST /v1/messages`` (JSON and SSE).

Streams follow Anthropic's event sequence: ``message_start`` (input usage), per content
block ``content_block_start`` / ``content_block_delta`` (``thinking_delta`` +
``signature_delta``, ``text_delta``, ``input_json_delta``) / ``content_block_stop``, a
``ping``, ``message_delta`` (``stop_reason``, output usage) and ``message_stop``. Usage maps
``prompt_tokens - cached_tokens`` to ``input_tokens`` and ``cached_tokens`` to
``cache_read_input_tokens``.
"""

from __future__ import annotations

import json
from typing import Any

from beamclaw_core.testing.fake_server import FakeLLMServer
from beamclaw_core.testing.fake_steps import FakeReply

SIGNATURE = "fake-signature"


def _frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class FakeAnthropicServer(FakeLLMServer):
    """The Messages API over real HTTP. ``base_url`` ends in ``/v1``."""

    path = "/v1/messages"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @staticmethod
    def _stop(reply: FakeReply) -> str:
        return reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn")

    @staticmethod
    def _usage(reply: FakeReply) -> dict[str, int]:
        u = reply.usage
        if u is None:
            return {"input_tokens": 0, "output_tokens": 0}
        return {
            "input_tokens": u.prompt_tokens - u.cached_tokens,
            "cache_read_input_tokens": u.cached_tokens,
            "cache_creation_input_tokens": 0,
            "output_tokens": u.completion_tokens,
        }

    def _blocks(self, reply: FakeReply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.reasoning:
            blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": SIGNATURE})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for i, call in enumerate(reply.tool_calls):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id or f"toolu_fake_{i}",
                    "name": call.name,
                    "input": call.args,
                }
            )
        return blocks

    def render_json(self, reply: FakeReply, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": self._blocks(reply),
            "stop_reason": self._stop(reply),
            "stop_sequence": None,
        }
        if reply.usage is not None:
            body["usage"] = self._usage(reply)
        return body

    def render_events(self, reply: FakeReply, model: str, request: Any) -> list[bytes]:
        size = max(1, reply.chunk_size)
        usage = self._usage(reply)
        start: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
        }
        if reply.usage is not None:
            start["usage"] = {**usage, "output_tokens": 1}
        frames = [_frame("message_start", {"type": "message_start", "message": start})]
        for index, block in enumerate(self._blocks(reply)):
            kind = block["type"]
            if kind == "thinking":
                opening: dict[str, Any] = {"type": "thinking", "thinking": ""}
                text = block["thinking"]
                deltas: list[dict[str, Any]] = [
                    {"type": "thinking_delta", "thinking": text[i : i + size]}
                    for i in range(0, len(text), size)
                ]
                deltas.append({"type": "signature_delta", "signature": SIGNATURE})
            elif kind == "text":
                opening = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": t} for t in reply.text_pieces()]
            else:
                opening = {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": {},
                }
                call = reply.tool_calls[
                    index - (1 if reply.reasoning else 0) - (1 if reply.text else 0)
                ]
                args = call.raw_args if call.raw_args is not None else json.dumps(call.args)
                deltas = [
                    {"type": "input_json_delta", "partial_json": args[i : i + size]}
                    for i in range(0, len(args), size)
                ]
            frames.append(
                _frame(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": opening},
                )
            )
            frames += [
                _frame(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": d},
                )
                for d in deltas
            ]
            frames.append(
                _frame("content_block_stop", {"type": "content_block_stop", "index": index})
            )
        frames.append(_frame("ping", {"type": "ping"}))
        delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": self._stop(reply), "stop_sequence": None},
        }
        if reply.usage is not None:
            delta["usage"] = {"output_tokens": usage["output_tokens"]}
        frames.append(_frame("message_delta", delta))
        frames.append(_frame("message_stop", {"type": "message_stop"}))
        return frames

    def render_error_event(self, error: dict[str, Any]) -> bytes:
        return _frame("error", {"type": "error", "error": error})
