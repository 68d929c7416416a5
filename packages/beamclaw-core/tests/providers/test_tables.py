"""Price table, context-window table, token estimation, SSE decoding, classification."""

from __future__ import annotations

import email.utils

import pytest

from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers import (
    DEFAULT_CONTEXT_WINDOW,
    ErrorKind,
    ModelPrice,
    PriceTable,
    ServerSentEvent,
    SSEDecoder,
    context_window_for,
    estimate_prompt_tokens,
    estimate_tokens,
    is_context_overflow,
    max_output_for,
    parse_retry_after,
)
from beamclaw_core.providers.classify import kind_for_status, safe_text


def test_context_window_by_family_with_vendor_prefix_and_override() -> None:
    assert context_window_for("anthropic/claude-sonnet-4-5") == 200_000
    assert context_window_for("gpt-4o-mini") == 128_000
    assert context_window_for("gpt-4.1") == 1_047_576
    assert context_window_for("some-local-model") == DEFAULT_CONTEXT_WINDOW
    assert context_window_for("gpt-4o", override=32_000) == 32_000
    assert max_output_for("claude-3-5-haiku-latest") == 8_192


def test_price_lookup_layers_and_cost() -> None:
    table = PriceTable.default({"my-model": ModelPrice(input=1, output=2)})
    assert table.price_for("openai/gpt-4o-mini") == ModelPrice(
        input=0.15, output=0.60, cached_input=0.075
    )
    assert table.price_for("unknown") is None
    usage = Usage(prompt_tokens=2_000_000, completion_tokens=1_000_000, total_tokens=3_000_000)
    assert table.cost("my-model", usage) == pytest.approx(4.0)
    assert table.apply("unknown", usage).cost_usd is None
    override = PriceTable.default({"*": ModelPrice(input=0, output=0)})
    assert override.cost("gpt-4o", usage) == 0.0


def test_token_estimation() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_prompt_tokens([Message.user("abcd" * 10)]) == 14


def test_sse_decoder_follows_the_spec() -> None:
    dec = SSEDecoder()
    lines = [": comment", "event: delta", "data: one", "data:two", "id: 5", "", "", "data: x"]
    out = [e for e in (dec.feed(line) for line in lines) if e is not None]
    assert out == [ServerSentEvent("delta", "one\ntwo")]
    assert dec.flush() == ServerSentEvent("message", "x")
    assert dec.flush() is None


def test_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "12"}) == 12
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=1_000_000) == pytest.approx(30)
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    "text",
    [
        "This model's maximum context length is 8192 tokens",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "Input is too long for requested model",
        "context_length_exceeded",
        "The input exceeds the maximum context window",
    ],
)
def test_context_overflow_messages_are_recognised(text: str) -> None:
    assert is_context_overflow(text)
    assert kind_for_status(400, None, text) is ErrorKind.CONTEXT_OVERFLOW


def test_other_bad_requests_are_not_overflow() -> None:
    assert not is_context_overflow("messages.0.content: field required")
    assert kind_for_status(400, None, "bad") is ErrorKind.INVALID_REQUEST
    assert kind_for_status(408, None, "") is ErrorKind.NETWORK


def test_safe_text_removes_the_key_and_truncates() -> None:
    assert safe_text("key abcde here", "abcde") == "key [REDACTED] here"
    assert len(safe_text("x" * 1000)) == 300
