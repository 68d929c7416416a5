"""API keys are resolved at call time and never leak; events carry metadata only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from beamclaw_core.messages import Message
from beamclaw_core.providers import ErrorKind, ProviderError, collect
from beamclaw_core.testing import FakeReply, HttpFault
from beamclaw_obs import EventType
from beamclaw_obs.testing import EventRecorder

from .conftest import Wire

# Five characters: below the scrubber's literal-registration minimum and matching no
# credential pattern, so a leak would NOT be hidden by the scrubber; only the provider's
# own care keeps it out.
SHORT_KEY = "Zq9xW"
KEY_ENV = {"api_key": {"env": "FAKE_LLM_KEY"}}


async def test_missing_variable_is_auth_error_naming_it(serve: Any) -> None:
    async with serve([FakeReply("never")], **KEY_ENV) as s:
        with pytest.raises(ProviderError) as info:
            await s.provider.complete([Message.user("hi")])
        with pytest.raises(ProviderError) as info2:
            await collect(s.provider.stream([Message.user("hi")]))
    assert info.value.kind is ErrorKind.AUTH
    assert "FAKE_LLM_KEY" in info.value.message
    assert info2.value.kind is ErrorKind.AUTH
    assert s.server.requests == []


async def test_key_is_resolved_at_call_time_and_sent(
    serve: Any, wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serve([FakeReply("a"), FakeReply("b")], **KEY_ENV) as s:
        monkeypatch.setenv("FAKE_LLM_KEY", "first-key-value")
        await s.provider.complete([Message.user("hi")])
        monkeypatch.setenv("FAKE_LLM_KEY", "second-key-value")
        await s.provider.complete([Message.user("hi")])
    if wire.kind == "openai":
        got = [r.headers["authorization"] for r in s.server.requests]
        assert got == ["Bearer first-key-value", "Bearer second-key-value"]
    else:
        got = [r.headers["x-api-key"] for r in s.server.requests]
        assert got == ["first-key-value", "second-key-value"]
        assert s.server.requests[0].headers["anthropic-version"] == "2023-06-01"


async def test_raw_key_never_in_errors_or_events(
    serve: Any, events: EventRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", SHORT_KEY)
    echo = HttpFault(
        401,
        {"error": {"type": "authentication_error", "message": f"invalid x-api-key {SHORT_KEY}"}},
    )
    async with serve([echo, echo, FakeReply("fine")], **KEY_ENV) as s:
        messages = [Message.user("hi")]
        errors: list[ProviderError] = []
        for attempt in (s.provider.complete(messages), collect(s.provider.stream(messages))):
            with pytest.raises(ProviderError) as info:
                await attempt
            errors.append(info.value)
        await collect(s.provider.stream(messages))
    for err in errors:
        assert err.kind is ErrorKind.AUTH
        assert SHORT_KEY not in str(err)
        assert SHORT_KEY not in err.message
        assert "env:FAKE_LLM_KEY" in err.message
    recorded = events.of(EventType.LLM_REQUEST) + events.of(EventType.LLM_RESPONSE)
    assert len(recorded) == 6
    dumped = json.dumps([e.data for e in recorded], default=str)
    assert SHORT_KEY not in dumped


async def test_events_carry_metadata_only(serve: Any, events: EventRecorder, wire: Wire) -> None:
    async with serve([FakeReply("secret answer text")]) as s:
        await s.provider.complete([Message.user("private question")])
    [request] = events.of(EventType.LLM_REQUEST)
    [response] = events.of(EventType.LLM_RESPONSE)
    assert request.data["provider"] == "fake"
    assert request.data["model"] == wire.model
    assert request.data["messages"] == 1
    assert response.data["status"] == 200
    assert response.data["total_tokens"] == 18
    assert response.data["finish_reason"] == "stop"
    assert response.data["success"] is True  # what /metrics counts LLM calls by
    assert response.data["duration_ms"] >= 0
    dumped = json.dumps([request.data, response.data], default=str)
    assert "private question" not in dumped
    assert "secret answer text" not in dumped


async def test_error_events_carry_the_kind(serve: Any, events: EventRecorder) -> None:
    async with serve([HttpFault.rate_limit(4)]) as s:
        with pytest.raises(ProviderError):
            await collect(s.provider.stream([Message.user("x")]))
    [response] = events.of(EventType.LLM_RESPONSE)
    assert response.data["error_kind"] == "rate_limit"
    assert response.data["success"] is False
    assert response.data["status"] == 429
    assert response.data["retry_after"] == 4
