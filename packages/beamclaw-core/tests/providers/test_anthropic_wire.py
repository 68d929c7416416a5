"""Anthropic specifics: system blocks and caching, role merging, thinking, headers."""

from __future__ import annotations

from beamclaw_core.messages import Message
from beamclaw_core.providers import (
    CompletionOptions,
    ProviderSettings,
    build_provider,
    collect,
)
from beamclaw_core.providers.anthropic_wire import (
    system_blocks,
    to_anthropic_messages,
    tool_choice,
)
from beamclaw_core.testing import FakeAnthropicServer, FakeReply
from beamclaw_tools import ToolCall


def test_cache_marker_sits_on_the_last_block_of_the_stable_prefix() -> None:
    messages = [
        Message.system("SOUL"),
        Message.system("TOOLS.md"),
        Message.user("hi"),
        Message.system("[Conversation summary]: earlier"),
        Message.user("again"),
    ]
    blocks = system_blocks(messages, cache=True)
    assert blocks == [
        {"type": "text", "text": "SOUL"},
        {"type": "text", "text": "TOOLS.md", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "[Conversation summary]: earlier"},
    ]
    assert all("cache_control" not in b for b in system_blocks(messages, cache=False))


def test_tool_results_merge_into_one_user_turn_and_roles_alternate() -> None:
    calls = (ToolCall(id="a", name="x"), ToolCall(id="b", name="y"))
    turns = to_anthropic_messages(
        [
            Message.user("go"),
            Message.assistant("", tool_calls=calls),
            Message.tool("a", "x", "ra"),
            Message.tool("b", "y", "rb", is_error=True),
            Message.user("and then?"),
        ]
    )
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": "ra"},
        {"type": "tool_result", "tool_use_id": "b", "content": "rb", "is_error": True},
        {"type": "text", "text": "and then?"},
    ]


def test_thinking_is_replayed_only_with_its_signature() -> None:
    signed = Message.assistant("A", reasoning="why", meta={"reasoning_signature": "s"})
    unsigned = Message.assistant("A", reasoning="why")
    assert to_anthropic_messages([signed])[0]["content"][0] == {
        "type": "thinking",
        "thinking": "why",
        "signature": "s",
    }
    assert to_anthropic_messages([unsigned])[0]["content"] == [{"type": "text", "text": "A"}]


def test_tool_choice_mapping() -> None:
    assert tool_choice("required") == {"type": "any"}
    assert tool_choice("auto") == {"type": "auto"}
    assert tool_choice("clock") == {"type": "tool", "name": "clock"}


async def test_thinking_stream_round_trip_and_body_options() -> None:
    async with FakeAnthropicServer(
        [FakeReply("Answer", reasoning="deep thought"), FakeReply("Next")]
    ) as server:
        provider = build_provider(
            "claude",
            ProviderSettings(
                kind="anthropic",
                base_url=server.base_url,
                thinking_budget_tokens=2048,
                anthropic_beta=["b1", "b2"],
            ),
        )
        first = await collect(provider.stream([Message.user("q")], CompletionOptions(stop=("X",))))
        assert first.message.text == "Answer"
        assert first.message.reasoning == "deep thought"
        assert first.message.meta["reasoning_signature"] == "fake-signature"
        await provider.complete([Message.user("q"), first.message, Message.user("more")])
        await provider.close()
    body = server.bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 8192
    assert body["stop_sequences"] == ["X"]
    assert server.requests[0].headers["anthropic-beta"] == "b1,b2"
    replay = server.bodies[1]["messages"][1]["content"]
    assert replay[0] == {
        "type": "thinking",
        "thinking": "deep thought",
        "signature": "fake-signature",
    }
    assert provider.capabilities().context_window == 200_000
    assert provider.capabilities().supports_prompt_caching
