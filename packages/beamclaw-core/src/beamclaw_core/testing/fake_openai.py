"""A fake OpenAI-compatible server: ``POST /v1/chat/completions`` (JSON and SSE).

Streams look like OpenAI's: a role chunk, content in ``chunk_size`` pieces (or one chunk
per scripted token), reasoning as ``delta.reasoning``, each tool call as an
``index``/``id``/``name`` chunk followed by argument fragments, a chunk with ``finish_reason``, a usage-only chunk when the request set
``stream_options.include_usage`` (and the reply has usage), then ``data: [DONE]``.
"""

from __future__ import annotations

import json
from typing import Any

from beamclaw_core.testing.fake_server import FakeLLMServer
from beamclaw_core.testing.fake_steps import FakeReply, FakeToolCall


def _args(call: FakeToolCall) -> str:
    return call.raw_args if call.raw_args is not None else json.dumps(call.args)


def _call_id(call: FakeToolCall, index: int) -> str:
    return call.id or f"call_fake_{index}"


def _frame(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    return f"data: {text}\n\n".encode()


class FakeOpenAIServer(FakeLLMServer):
    """Chat Completions over real HTTP. ``base_url`` ends in ``/v1``."""

    path = "/v1/chat/completions"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @staticmethod
    def _finish(reply: FakeReply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    @staticmethod
    def _usage(reply: FakeReply) -> dict[str, Any] | None:
        u = reply.usage
        if u is None:
            return None
        return {
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.total_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
        }

    def render_json(self, reply: FakeReply, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message["reasoning"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": _call_id(c, i),
                    "type": "function",
                    "function": {"name": c.name, "arguments": _args(c)},
                }
                for i, c in enumerate(reply.tool_calls)
            ]
        body: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(reply)}],
        }
        usage = self._usage(reply)
        if usage is not None:
            body["usage"] = usage
        return body

    def render_events(self, reply: FakeReply, model: str, request: Any) -> list[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return _frame(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
            )

        size = max(1, reply.chunk_size)
        frames = [chunk({"role": "assistant", "content": ""})]
        if reply.reasoning:
            frames += [
                chunk({"reasoning": reply.reasoning[i : i + size]})
                for i in range(0, len(reply.reasoning), size)
            ]
        frames += [chunk({"content": piece}) for piece in reply.text_pieces()]
        for index, call in enumerate(reply.tool_calls):
            frames.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": _call_id(call, index),
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            args = _args(call)
            frames += [
                chunk(
                    {
                        "tool_calls": [
                            {"index": index, "function": {"arguments": args[i : i + size]}}
                        ]
                    }
                )
                for i in range(0, len(args), size)
            ]
        frames.append(chunk({}, self._finish(reply)))
        opts = request.get("stream_options") if isinstance(request, dict) else None
        usage = self._usage(reply)
        if isinstance(opts, dict) and opts.get("include_usage") and usage is not None:
            frames.append(
                _frame(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "model": model,
                        "choices": [],
                        "usage": usage,
                    }
                )
            )
        frames.append(_frame("[DONE]"))
        return frames

    def render_error_event(self, error: dict[str, Any]) -> bytes:
        return _frame({"error": error})
