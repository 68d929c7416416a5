"""OpenAI-compatible specifics: headers, options, reasoning, odd servers."""

from __future__ import annotations

import json

import orjson

from beamclaw_core.messages import Message
from beamclaw_core.providers import (
    CompletionOptions,
    ProviderSettings,
    ReasoningDelta,
    ServerSentEvent,
    ToolCallDelta,
    build_provider,
    collect,
)
from beamclaw_core.providers.openai_wire import (
    OpenAIStreamDecoder,
    encoded_openai_tools,
    to_openai_message,
    to_openai_tool,
)
from beamclaw_core.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from beamclaw_tools import ToolCall, ToolDef


async def test_openrouter_headers_and_options_reach_the_wire() -> None:
    async with FakeOpenAIServer([FakeReply("ok")]) as server:
        settings = ProviderSettings(
            base_url=server.base_url,
            model="anthropic/claude-sonnet-4-5",
            http_referer="https://beamclaw.test",
            x_title="BeamClaw",
            extra_body={"provider": {"order": ["anthropic"]}},
            headers={"X-Extra": "1"},
        )
        provider = build_provider("openrouter", settings)
        opts = CompletionOptions(
            tools=(ToolDef(name="t", description="d"),),
            tool_choice="t",
            temperature=0.2,
            max_tokens=50,
            stop=("END",),
            reasoning_effort="low",
            extra={"seed": 7},
        )
        await collect(provider.stream([Message.user("hi")], opts))
        await provider.close()
    req = server.requests[0]
    assert req.headers["http-referer"] == "https://beamclaw.test"
    assert req.headers["x-title"] == "BeamClaw"
    assert req.headers["x-extra"] == "1"
    assert "authorization" not in req.headers
    body = req.body
    assert body["stream_options"] == {"include_usage": True}
    assert body["tool_choice"] == {"type": "function", "function": {"name": "t"}}
    assert (body["temperature"], body["max_tokens"], body["stop"]) == (0.2, 50, ["END"])
    assert body["reasoning_effort"] == "low"
    assert body["provider"] == {"order": ["anthropic"]}
    assert body["seed"] == 7


async def test_stream_usage_can_be_disabled() -> None:
    async with FakeOpenAIServer([FakeReply("ok")]) as server:
        provider = build_provider(
            "local",
            ProviderSettings(base_url=server.base_url, model="llama3", include_stream_usage=False),
        )
        done = await collect(provider.stream([Message.user("hi")]))
        await provider.close()
    assert "stream_options" not in server.bodies[0]
    assert done.message.usage is not None
    assert done.message.usage.estimated
    assert not provider.capabilities().supports_streaming_usage


async def test_malformed_tool_arguments_survive_as_raw_args() -> None:
    call = FakeToolCall("t", raw_args='{"path": "a"', id="c9")
    async with FakeOpenAIServer([FakeReply(tool_calls=(call,)), FakeReply("ok")]) as server:
        provider = build_provider("p", ProviderSettings(base_url=server.base_url, model="m"))
        first = await collect(provider.stream([Message.user("hi")]))
        [got] = first.message.tool_calls
        assert (got.args, got.raw_args) == ({}, '{"path": "a"')
        await provider.complete(
            [Message.user("hi"), first.message, Message.tool("c9", "t", "bad args", is_error=True)]
        )
        await provider.close()
    sent = server.bodies[1]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"path": "a"'


def test_assistant_message_mapping() -> None:
    msg = Message.assistant(
        "thinking aloud", tool_calls=(ToolCall(id="a", name="n", args={"k": 1}),)
    )
    assert to_openai_message(msg) == {
        "role": "assistant",
        "content": "thinking aloud",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "n", "arguments": '{"k": 1}'}}
        ],
    }
    assert to_openai_message(Message.assistant("")) == {"role": "assistant", "content": ""}


def _event(data: object) -> ServerSentEvent:
    return ServerSentEvent("message", json.dumps(data))


def test_decoder_handles_reasoning_content_and_missing_index() -> None:
    dec = OpenAIStreamDecoder(provider="p", model="m")
    got = dec.feed(_event({"choices": [{"delta": {"reasoning_content": "hm"}}]}))
    assert got == [ReasoningDelta(text="hm")]
    got = dec.feed(
        _event(
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {"id": "x", "function": {"name": "a", "arguments": "{}"}},
                                {"id": "y", "function": {"name": "b", "arguments": "{}"}},
                            ]
                        }
                    }
                ]
            }
        )
    )
    assert [(c.index, c.id) for c in got if isinstance(c, ToolCallDelta)] == [(0, "x"), (1, "y")]
    dec.feed(_event({"choices": [{"delta": {}, "finish_reason": "function_call"}]}))
    assert dec.finish_reason == "tool_calls"
    assert dec.feed(ServerSentEvent("message", "[DONE]")) == []
    assert dec.done


def test_openrouter_reported_cost_is_kept_when_unpriced() -> None:
    from beamclaw_core.providers.openai_wire import parse_usage

    usage = parse_usage({"prompt_tokens": 3, "completion_tokens": 1, "cost": 0.0042})
    assert usage is not None
    assert usage.cost_usd == 0.0042
    assert usage.total_tokens == 4


def test_a_tools_array_is_encoded_once_per_list_of_definitions() -> None:
    tools = [
        ToolDef(name="read", description="Read a file.", parameters={"type": "object"}),
        ToolDef(name="echo", description="Echo \u00e9", parameters={"required": ["text"]}),
    ]
    fresh = orjson.dumps({"tools": [to_openai_tool(t) for t in tools]})
    first = encoded_openai_tools(tools)
    assert orjson.dumps({"tools": first}) == fresh
    assert encoded_openai_tools(tuple(tools)) is first  # another list, the same objects
    equal = [t.model_copy() for t in tools]  # equal definitions, other objects
    assert encoded_openai_tools(equal) is not first
    assert orjson.dumps({"tools": encoded_openai_tools(equal)}) == fresh
    assert orjson.dumps(encoded_openai_tools([])) == b"[]"
