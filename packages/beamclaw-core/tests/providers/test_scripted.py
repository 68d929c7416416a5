"""ScriptedProvider: the in-process test double the loop is tested with."""

from __future__ import annotations

import asyncio

import pytest

from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers import (
    CompletionOptions,
    ErrorKind,
    Provider,
    ProviderError,
    StreamAssembler,
    TextDelta,
    collect,
)
from beamclaw_core.testing import (
    CallTool,
    CallTools,
    Fail,
    Hang,
    Reply,
    Rule,
    ScriptedProvider,
)
from beamclaw_tools import ToolDef

USER = [Message.user("hi")]


async def test_follows_the_script_in_order_and_records_calls() -> None:
    provider = ScriptedProvider([CallTool("read", {"path": "a"}), Reply("done")])
    assert isinstance(provider, Provider)
    opts = CompletionOptions(tools=(ToolDef(name="read", description="r"),))
    first = await provider.complete(USER, opts)
    assert first.finish_reason == "tool_calls"
    assert first.message.tool_calls[0].name == "read"
    assert first.message.tool_calls[0].args == {"path": "a"}
    second = await collect(provider.stream([*USER, first.message]))
    assert second.message.text == "done"
    assert [c.stream for c in provider.calls] == [False, True]
    assert provider.calls[0].options == opts
    assert provider.calls[1].messages[-1] == first.message
    assert provider.remaining == 0


async def test_stream_splits_text_into_chunks() -> None:
    provider = ScriptedProvider([Reply("abcdefghij")], chunk_size=4)
    texts = [c.text async for c in provider.stream(USER) if isinstance(c, TextDelta)]
    assert texts == ["abcd", "efgh", "ij"]


async def test_several_tool_calls_and_explicit_ids_and_usage() -> None:
    usage = Usage(prompt_tokens=10, completion_tokens=2, total_tokens=12)
    provider = ScriptedProvider(
        [CallTools((CallTool("a", {"x": 1}, id="c1"), CallTool("b")), text="working", usage=usage)]
    )
    done = await collect(provider.stream(USER))
    assert next((c.id, c.name) for c in done.message.tool_calls) == ("c1", "a")
    assert done.message.tool_calls[1].name == "b"
    assert done.message.text == "working"
    assert done.message.usage == usage


async def test_usage_is_estimated_when_not_scripted() -> None:
    done = await ScriptedProvider([Reply("x" * 40)]).complete(USER)
    assert done.message.usage is not None
    assert done.message.usage.estimated
    assert done.message.usage.completion_tokens == 10


async def test_generated_ids_are_deterministic_across_runs() -> None:
    a = await ScriptedProvider([CallTool("t", {"k": 1})]).complete(USER)
    b = await ScriptedProvider([CallTool("t", {"k": 1})]).complete(USER)
    assert a.message.tool_calls[0].id == b.message.tool_calls[0].id


async def test_fail_raises_the_kind_with_retry_after() -> None:
    provider = ScriptedProvider([Fail(ErrorKind.RATE_LIMIT, retry_after=2.5, status=429)])
    with pytest.raises(ProviderError) as info:
        await provider.complete(USER)
    assert info.value.kind is ErrorKind.RATE_LIMIT
    assert info.value.retry_after == 2.5
    assert info.value.status == 429


async def test_fail_mid_stream_after_chunks() -> None:
    provider = ScriptedProvider(
        [Fail(ErrorKind.NETWORK, after_chunks=2, text="abcdefghijkl")], chunk_size=4
    )
    acc = StreamAssembler()

    async def drain() -> None:
        async for chunk in provider.stream(USER):
            acc.feed(chunk)

    with pytest.raises(ProviderError) as info:
        await drain()
    assert info.value.kind is ErrorKind.NETWORK
    assert acc.text == "abcdefgh"


async def test_callable_rule_sees_the_messages() -> None:
    def echo(messages: list[Message], options: CompletionOptions) -> Rule:
        return Reply(f"you said {messages[-1].text} with {len(options.tools)} tools")

    done = await ScriptedProvider([echo]).complete([Message.user("ping")])
    assert done.message.text == "you said ping with 0 tools"


async def test_exhausted_script_is_a_clear_non_retryable_error() -> None:
    provider = ScriptedProvider([Reply("one")])
    await provider.complete(USER)
    with pytest.raises(ProviderError) as info:
        await provider.complete(USER)
    assert info.value.kind is ErrorKind.INVALID_REQUEST
    assert "call #2" in info.value.message


async def test_repeat_last_keeps_answering() -> None:
    provider = ScriptedProvider([Reply("again")], repeat_last=True)
    for _ in range(3):
        assert (await provider.complete(USER)).message.text == "again"


async def test_hang_waits_until_cancelled() -> None:
    provider = ScriptedProvider([Hang()])
    task = asyncio.create_task(provider.complete(USER))
    await asyncio.sleep(0.01)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
