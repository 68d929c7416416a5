"""StreamAssembler: chunks → Completion."""

from __future__ import annotations

import pytest

from beamclaw_core.messages import Usage
from beamclaw_core.parsing import make_id_factory
from beamclaw_core.providers import (
    ErrorKind,
    FinishChunk,
    ProviderError,
    ReasoningDelta,
    StreamAssembler,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)


def test_text_and_usage_assemble_into_one_message() -> None:
    usage = Usage(prompt_tokens=3, completion_tokens=2, total_tokens=5)
    acc = StreamAssembler(provider="p").feed_all(
        [
            TextDelta(text="Hel"),
            TextDelta(text="lo"),
            UsageChunk(usage=usage),
            FinishChunk(reason="stop", model="m1"),
        ]
    )
    done = acc.completion()
    assert done.message.text == "Hello"
    assert done.message.usage == usage
    assert done.finish_reason == "stop"
    assert done.model == "m1"
    assert done.message.model == "m1"
    assert done.provider == "p"


def test_tool_call_fragments_group_by_index_not_arrival_order() -> None:
    acc = StreamAssembler().feed_all(
        [
            ToolCallDelta(index=1, id="b", name="second", arguments='{"y"'),
            ToolCallDelta(index=0, id="a", name="first", arguments='{"x":'),
            ToolCallDelta(index=1, arguments=":2}"),
            ToolCallDelta(index=0, arguments="1}"),
            FinishChunk(reason="stop"),
        ]
    )
    done = acc.completion()
    assert [(c.id, c.name, c.args) for c in done.message.tool_calls] == [
        ("a", "first", {"x": 1}),
        ("b", "second", {"y": 2}),
    ]
    assert done.finish_reason == "tool_calls"


def test_malformed_arguments_are_kept_raw_not_raised() -> None:
    acc = StreamAssembler().feed_all(
        [
            ToolCallDelta(index=0, id="a", name="t", arguments="{not json"),
            FinishChunk(reason="tool_calls"),
        ]
    )
    call = acc.completion().message.tool_calls[0]
    assert call.args == {}
    assert call.raw_args == "{not json"


def test_missing_ids_are_deterministic_from_the_factory() -> None:
    chunks = [ToolCallDelta(index=0, name="t", arguments='{"a":1}'), FinishChunk(reason="stop")]
    one = StreamAssembler(id_factory=make_id_factory("turn-1")).feed_all(chunks).completion()
    two = StreamAssembler(id_factory=make_id_factory("turn-1")).feed_all(chunks).completion()
    other = StreamAssembler(id_factory=make_id_factory("turn-2")).feed_all(chunks).completion()
    assert one.message.tool_calls[0].id == two.message.tool_calls[0].id
    assert one.message.tool_calls[0].id != other.message.tool_calls[0].id
    assert one.message.tool_calls[0].id.startswith("call_")


def test_reasoning_stays_out_of_text_and_inline_thinking_is_moved() -> None:
    acc = StreamAssembler().feed_all(
        [
            ReasoningDelta(text="native ", signature="sig"),
            TextDelta(text="<think>inline</think>"),
            TextDelta(text="Answer"),
            FinishChunk(reason="stop"),
        ]
    )
    msg = acc.completion().message
    assert msg.text == "Answer"
    assert msg.reasoning == "native \n\ninline"
    assert msg.meta["reasoning_signature"] == "sig"


def test_strip_can_be_disabled() -> None:
    acc = StreamAssembler(strip_thinking_tags=False).feed_all(
        [TextDelta(text="<think>x</think>A"), FinishChunk(reason="stop")]
    )
    assert acc.completion().message.text == "<think>x</think>A"


def test_stream_without_finish_is_a_truncated_network_error() -> None:
    acc = StreamAssembler(provider="p").feed_all([TextDelta(text="half")])
    with pytest.raises(ProviderError) as info:
        acc.completion()
    assert info.value.kind is ErrorKind.NETWORK
    assert "truncated" in info.value.message
    partial = acc.partial()
    assert partial.message.text == "half"
    assert partial.finish_reason == "incomplete"


def test_chunks_after_finish_are_ignored() -> None:
    acc = StreamAssembler().feed_all(
        [TextDelta(text="a"), FinishChunk(reason="stop"), TextDelta(text="b")]
    )
    assert acc.completion().message.text == "a"
    assert acc.finished
