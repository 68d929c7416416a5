"""Conformance suite: every HTTP provider against its fake server over real HTTP.

Plain and streamed replies, one and several tool calls with the exact follow-up request
body, image input, usage, and every error class.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import pytest

from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers import (
    CompletionOptions,
    ErrorKind,
    FinishChunk,
    Provider,
    ProviderError,
    ProviderSettings,
    StreamAssembler,
    TextDelta,
    UsageChunk,
    build_provider,
    collect,
)
from beamclaw_core.testing import (
    FakeOpenAIServer,
    FakeReply,
    FakeToolCall,
    HttpFault,
    InvalidJSON,
    RawBody,
    ServerHang,
    StreamError,
    Truncate,
)
from beamclaw_tools import ImagePart, TextPart, ToolDef

from .conftest import Wire

USER = [Message.system("You are terse."), Message.user("What time is it?")]
CLOCK = ToolDef(
    name="clock",
    description="current time",
    parameters={"type": "object", "properties": {"tz": {"type": "string"}}},
)
WEATHER = ToolDef(
    name="weather",
    description="weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
TOOLS = CompletionOptions(tools=(CLOCK, WEATHER))


async def test_plain_reply(serve: Any, wire: Wire) -> None:
    async with serve([FakeReply("It is noon.")]) as s:
        done = await s.provider.complete(USER)
    assert done.message.text == "It is noon."
    assert done.finish_reason == "stop"
    assert done.model == wire.model
    assert done.provider == "fake"
    assert done.message.usage is not None
    assert done.message.usage.total_tokens == 18
    body = s.server.bodies[0]
    assert body["model"] == wire.model
    assert body["stream"] is False
    if wire.kind == "openai":
        assert body["messages"] == [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "What time is it?"},
        ]
    else:
        assert body["system"] == [
            {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
        ]
        assert body["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "What time is it?"}]}
        ]


async def test_streamed_chunks_arrive_before_the_server_finishes(serve: Any) -> None:
    hold = asyncio.Event()
    async with serve([FakeReply("one two three four five six", chunk_size=4, hold=hold)]) as s:
        stream = s.provider.stream(USER)
        first = await anext(stream)
        while not isinstance(first, TextDelta):
            first = await anext(stream)
        sent_when_first_arrived = s.server.events_sent
        assert not hold.is_set()
        hold.set()
        acc = StreamAssembler()
        acc.feed(first)
        async for chunk in stream:
            acc.feed(chunk)
        total = s.server.events_sent
    assert first.text == "one "
    assert sent_when_first_arrived < total
    done = acc.completion()
    assert done.message.text == "one two three four five six"
    assert s.server.bodies[0]["stream"] is True


async def test_stream_ends_with_usage_then_finish(serve: Any) -> None:
    async with serve([FakeReply("hi")]) as s:
        chunks = [c async for c in s.provider.stream(USER)]
    assert isinstance(chunks[-2], UsageChunk)
    assert isinstance(chunks[-1], FinishChunk)
    assert chunks[-1].reason == "stop"


def _expected_followup(
    wire: Wire, calls: list[tuple[str, str, dict[str, Any]]], results: list[str]
) -> list[dict[str, Any]]:
    if wire.kind == "openai":
        return [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "What time is it?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                    for cid, name, args in calls
                ],
            },
            *[
                {"role": "tool", "tool_call_id": cid, "content": res, "name": name}
                for (cid, name, _), res in zip(calls, results, strict=True)
            ],
        ]
    return [
        {"role": "user", "content": [{"type": "text", "text": "What time is it?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": cid, "name": name, "input": args}
                for cid, name, args in calls
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": cid, "content": res}
                for (cid, _, _), res in zip(calls, results, strict=True)
            ],
        },
    ]


@pytest.mark.parametrize("streamed", [False, True])
async def test_one_tool_call_then_exact_followup_body(
    serve: Any, wire: Wire, streamed: bool
) -> None:
    script = [
        FakeReply(tool_calls=(FakeToolCall("clock", {"tz": "UTC"}, id="call_1"),)),
        FakeReply("It is 12:00 UTC."),
    ]
    async with serve(script) as s:
        if streamed:
            first = await collect(s.provider.stream(USER, TOOLS))
        else:
            first = await s.provider.complete(USER, TOOLS)
        assert first.finish_reason == "tool_calls"
        [call] = first.message.tool_calls
        assert (call.id, call.name, call.args) == ("call_1", "clock", {"tz": "UTC"})
        history = [*USER, first.message, Message.tool("call_1", "clock", "12:00")]
        second = await s.provider.complete(history, TOOLS)
    assert second.message.text == "It is 12:00 UTC."
    body = s.server.bodies[1]
    assert body["messages"] == _expected_followup(
        wire, [("call_1", "clock", {"tz": "UTC"})], ["12:00"]
    )
    if wire.kind == "openai":
        assert [t["function"]["name"] for t in body["tools"]] == ["clock", "weather"]
    else:
        assert [t["name"] for t in body["tools"]] == ["clock", "weather"]
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" not in body["tools"][0]


@pytest.mark.parametrize("streamed", [False, True])
async def test_several_tool_calls_keep_order_and_results_match(
    serve: Any, wire: Wire, streamed: bool
) -> None:
    calls = (
        FakeToolCall("clock", {"tz": "UTC"}, id="c_a"),
        FakeToolCall("weather", {"city": "Oslo"}, id="c_b"),
        FakeToolCall("clock", {"tz": "CET"}, id="c_c"),
    )
    async with serve([FakeReply(tool_calls=calls), FakeReply("done")]) as s:
        if streamed:
            first = await collect(s.provider.stream(USER, TOOLS))
        else:
            first = await s.provider.complete(USER, TOOLS)
        got = [(c.id, c.name, c.args) for c in first.message.tool_calls]
        assert got == [
            ("c_a", "clock", {"tz": "UTC"}),
            ("c_b", "weather", {"city": "Oslo"}),
            ("c_c", "clock", {"tz": "CET"}),
        ]
        results = [Message.tool(cid, name, f"r{i}") for i, (cid, name, _) in enumerate(got)]
        await s.provider.complete([*USER, first.message, *results], TOOLS)
    assert s.server.bodies[1]["messages"] == _expected_followup(wire, got, ["r0", "r1", "r2"])


async def test_image_input_is_sent_inline(serve: Any, wire: Wire) -> None:
    content = (TextPart(text="What is this?"), ImagePart(media_type="image/png", data="iVBORw0K"))
    async with serve([FakeReply("A pixel.")]) as s:
        done = await s.provider.complete([Message.user(content)])
    assert done.message.text == "A pixel."
    assert s.provider.capabilities().supports_vision
    parts = s.server.bodies[0]["messages"][0]["content"]
    if wire.kind == "openai":
        assert parts == [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
        ]
    else:
        assert parts == [
            {"type": "text", "text": "What is this?"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
            },
        ]


@pytest.mark.parametrize("streamed", [False, True])
async def test_usage_is_reported_with_cache_and_cost(serve: Any, streamed: bool) -> None:
    usage = Usage(prompt_tokens=1000, completion_tokens=200, total_tokens=1200, cached_tokens=400)
    pricing = {"*": {"input": 1.0, "output": 10.0, "cached_input": 0.5}}
    async with serve([FakeReply("ok", usage=usage)], pricing=pricing) as s:
        if streamed:
            done = await collect(s.provider.stream(USER))
        else:
            done = await s.provider.complete(USER)
    got = done.message.usage
    assert got is not None
    assert (got.prompt_tokens, got.completion_tokens, got.total_tokens, got.cached_tokens) == (
        1000,
        200,
        1200,
        400,
    )
    assert not got.estimated
    assert got.cost_usd == pytest.approx((600 * 1.0 + 400 * 0.5 + 200 * 10.0) / 1e6)


@pytest.mark.parametrize("streamed", [False, True])
async def test_missing_usage_is_estimated(serve: Any, streamed: bool) -> None:
    async with serve([FakeReply("x" * 40, usage=None)]) as s:
        if streamed:
            done = await collect(s.provider.stream(USER))
        else:
            done = await s.provider.complete(USER)
    assert done.message.usage is not None
    assert done.message.usage.estimated
    assert done.message.usage.completion_tokens == 10
    assert done.message.usage.prompt_tokens > 0


async def test_reasoning_is_kept_out_of_the_text(serve: Any) -> None:
    async with serve(
        [
            FakeReply("Answer.", reasoning="Let me think."),
            FakeReply("Answer.", reasoning="Let me think."),
        ]
    ) as s:
        whole = await s.provider.complete(USER)
        streamed = await collect(s.provider.stream(USER))
    for done in (whole, streamed):
        assert done.message.text == "Answer."
        assert done.message.reasoning == "Let me think."


async def test_inline_think_tags_are_stripped(serve: Any) -> None:
    async with serve([FakeReply("<think>hmm</think>Visible")]) as s:
        done = await s.provider.complete(USER)
    assert done.message.text == "Visible"
    assert done.message.reasoning == "hmm"


# -- errors ---------------------------------------------------------------------------


async def call(provider: Provider, streamed: bool, acc: StreamAssembler | None = None) -> None:
    """One call, streamed (feeding ``acc``) or not."""
    if not streamed:
        await provider.complete(USER)
        return
    acc = acc or StreamAssembler()
    async for chunk in provider.stream(USER):
        acc.feed(chunk)


ERROR_CASES = [
    pytest.param(HttpFault.auth_error(401), ErrorKind.AUTH, 401, id="401"),
    pytest.param(HttpFault.auth_error(403, "forbidden"), ErrorKind.AUTH, 403, id="403"),
    pytest.param(HttpFault.rate_limit(7), ErrorKind.RATE_LIMIT, 429, id="429"),
    pytest.param(HttpFault.server_error(500), ErrorKind.NETWORK, 500, id="500"),
    pytest.param(HttpFault.server_error(503), ErrorKind.NETWORK, 503, id="503"),
    pytest.param(HttpFault.server_error(529, "overloaded"), ErrorKind.NETWORK, 529, id="529"),
    pytest.param(HttpFault.bad_request(), ErrorKind.INVALID_REQUEST, 400, id="400"),
    pytest.param(
        HttpFault.bad_request("model not found", 404), ErrorKind.INVALID_REQUEST, 404, id="404"
    ),
    pytest.param(
        HttpFault.bad_request("bad schema", 422), ErrorKind.INVALID_REQUEST, 422, id="422"
    ),
    pytest.param(HttpFault.context_overflow(), ErrorKind.CONTEXT_OVERFLOW, 400, id="overflow"),
    pytest.param(
        HttpFault(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000",
                },
            },
        ),
        ErrorKind.CONTEXT_OVERFLOW,
        400,
        id="anthropic-overflow",
    ),
    pytest.param(HttpFault(418, "teapot"), ErrorKind.UNKNOWN, 418, id="418"),
]


@pytest.mark.parametrize(("fault", "kind", "status"), ERROR_CASES)
@pytest.mark.parametrize("streamed", [False, True])
async def test_http_errors_are_classified(
    serve: Any, fault: HttpFault, kind: ErrorKind, status: int, streamed: bool
) -> None:
    async with serve([fault]) as s:
        with pytest.raises(ProviderError) as info:
            await call(s.provider, streamed)
    err = info.value
    assert err.kind is kind
    assert err.status == status
    assert err.provider == "fake"
    assert f"HTTP {status}" in err.message
    if kind is ErrorKind.RATE_LIMIT:
        assert err.retry_after == 7


@pytest.mark.parametrize("streamed", [False, True])
async def test_truncated_response_is_a_network_error(serve: Any, streamed: bool) -> None:
    async with serve([Truncate(after_events=3)]) as s:
        acc = StreamAssembler()
        with pytest.raises(ProviderError) as info:
            await call(s.provider, streamed, acc)
    assert info.value.kind is ErrorKind.NETWORK
    if streamed:
        assert acc.chunks >= 1


@pytest.mark.parametrize("streamed", [False, True])
async def test_invalid_json_is_unknown_with_an_excerpt(serve: Any, streamed: bool) -> None:
    async with serve([InvalidJSON()]) as s:
        with pytest.raises(ProviderError) as info:
            await call(s.provider, streamed)
    assert info.value.kind is ErrorKind.UNKNOWN
    assert "JSON" in info.value.message
    assert "this is not json" in info.value.message


async def test_non_sse_body_on_a_stream_is_a_clear_error(serve: Any) -> None:
    async with serve([RawBody(b"<html>gateway login</html>")]) as s:
        with pytest.raises(ProviderError) as info:
            await collect(s.provider.stream(USER))
    assert info.value.kind is ErrorKind.UNKNOWN
    assert "text/event-stream" in info.value.message
    assert "text/html" in info.value.message


async def test_json_body_on_a_stream_request_is_accepted(serve: Any, wire: Wire) -> None:
    async with serve([]) as s:
        whole = s.server.render_json(FakeReply("not streamed"), wire.model)
        s.server.add(RawBody(json.dumps(whole).encode(), content_type="application/json"))
        done = await collect(s.provider.stream(USER))
    assert done.message.text == "not streamed"


async def test_oversized_response_is_refused(serve: Any) -> None:
    async with serve([FakeReply("x" * 5000), FakeReply("x" * 5000)], max_response_bytes=1024) as s:
        with pytest.raises(ProviderError) as info:
            await s.provider.complete(USER)
        assert "max_response_bytes" in info.value.message
        with pytest.raises(ProviderError) as info2:
            await collect(s.provider.stream(USER))
        assert "max_response_bytes" in info2.value.message


async def test_in_band_stream_error_is_classified(serve: Any) -> None:
    overloaded = {"type": "overloaded_error", "message": "Overloaded"}
    async with serve([StreamError(overloaded, after_events=2)]) as s:
        with pytest.raises(ProviderError) as info:
            await collect(s.provider.stream(USER))
    assert info.value.kind is ErrorKind.NETWORK
    assert "Overloaded" in info.value.message


async def test_hanging_stream_hits_the_idle_timeout(serve: Any) -> None:
    async with serve([ServerHang()], stream_idle_timeout=0.2, read_timeout=0.2) as s:
        with pytest.raises(ProviderError) as info:
            await collect(s.provider.stream(USER))
    assert info.value.kind is ErrorKind.NETWORK


async def test_hanging_completion_hits_the_read_timeout(serve: Any) -> None:
    async with serve([ServerHang()], read_timeout=0.2) as s:
        with pytest.raises(ProviderError) as info:
            await s.provider.complete(USER)
    assert info.value.kind is ErrorKind.NETWORK
    assert "read_timeout" in info.value.message


async def test_slow_drip_stream_is_not_an_error(serve: Any) -> None:
    async with serve(
        [FakeReply("drip drip drip", chunk_size=5, delay=0.02)], stream_idle_timeout=1.0
    ) as s:
        done = await collect(s.provider.stream(USER))
    assert done.message.text == "drip drip drip"


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
async def test_connection_refused_is_a_network_error(wire: Wire, transport: str) -> None:
    server = wire.server_cls([])
    await server.start()
    provider = wire.provider(server, http_transport=transport)
    await server.stop()
    try:
        with pytest.raises(ProviderError) as info:
            await provider.complete(USER)
        assert info.value.kind is ErrorKind.NETWORK
        assert "cannot connect" in info.value.message
    finally:
        await provider.close()


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
async def test_a_compressed_answer_is_decoded(serve: Any, wire: Wire, transport: str) -> None:
    async with serve([], http_transport=transport) as s:
        answer = json.dumps(s.server.render_json(FakeReply("inflated"), wire.model)).encode()
        s.server.add(
            RawBody(
                gzip.compress(answer),
                content_type="application/json",
                headers={"Content-Encoding": "gzip"},
            )
        )
        done = await s.provider.complete(USER)
    assert done.message.text == "inflated"


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
async def test_both_http_transports_stream_and_classify(serve: Any, transport: str) -> None:
    script = [FakeReply("via " + transport), Truncate(after_events=2), ServerHang()]
    # the idle timeout must outlast a loaded machine's pauses in the good stream, not only the hang
    async with serve(script, http_transport=transport, stream_idle_timeout=1.0) as s:
        done = await collect(s.provider.stream(USER))
        assert done.message.text == "via " + transport
        for _ in range(2):
            with pytest.raises(ProviderError) as info:
                await call(s.provider, streamed=True)
            assert info.value.kind is ErrorKind.NETWORK


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
async def test_cookies_a_provider_sets_are_never_sent_back(serve: Any, transport: str) -> None:
    cookie = {"Set-Cookie": "session=tracked; Path=/"}
    fault = HttpFault(status=400, body={"error": {"message": "bad"}}, headers=cookie)
    async with serve([fault, FakeReply("fine")], http_transport=transport) as s:
        with pytest.raises(ProviderError):
            await s.provider.complete(USER)
        assert (await s.provider.complete(USER)).message.text == "fine"
    assert "cookie" not in s.server.requests[1].headers


async def test_the_fake_server_can_keep_only_recent_requests(serve: Any) -> None:
    async with serve([FakeReply("one"), FakeReply("two")]) as s:
        s.server.keep_requests = 1
        assert (await s.provider.complete(USER)).message.text == "one"
        assert (await s.provider.complete(USER)).message.text == "two"  # the script advanced
    assert s.server.served == 2
    assert len(s.server.requests) == 1


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
async def test_requests_go_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    # the fake server plays the forward proxy: it answers the absolute-form request
    async with FakeOpenAIServer([FakeReply("proxied")]) as server:
        for name in ("http_proxy", "HTTP_PROXY"):
            monkeypatch.setenv(name, server.root_url)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.setenv(name, "")
        settings = ProviderSettings(
            kind="openai", base_url="http://llm.invalid/v1", model="m", http_transport=transport
        )
        provider = build_provider("proxied", settings)
        try:
            done = await provider.complete(USER)
        finally:
            await provider.close()
    assert done.message.text == "proxied"
    assert server.requests[0].headers["host"] == "llm.invalid"
