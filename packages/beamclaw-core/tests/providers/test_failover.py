"""FailoverProvider and the config-driven registry."""

from __future__ import annotations

import pytest

from beamclaw_core.messages import Message
from beamclaw_core.providers import (
    ErrorKind,
    FailoverMember,
    FailoverProvider,
    FinishChunk,
    ProviderConfigError,
    ProviderError,
    ProviderSettings,
    build_provider_chain,
    collect,
)
from beamclaw_core.testing import (
    Fail,
    FakeAnthropicServer,
    FakeOpenAIServer,
    FakeReply,
    HttpFault,
    Reply,
    ScriptedProvider,
)
from beamclaw_obs import EventType
from beamclaw_obs.testing import EventRecorder

USER = [Message.user("hi")]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_fails_over_and_records_who_answered(events: EventRecorder) -> None:
    primary = ScriptedProvider([Fail(ErrorKind.NETWORK)], name="a", model="model-a")
    backup = ScriptedProvider([Reply("from b")], name="b", model="model-b")
    chain = FailoverProvider([primary, backup])
    done = await chain.complete(USER)
    assert done.message.text == "from b"
    assert (done.provider, done.model, done.message.model) == ("b", "model-b", "model-b")
    assert chain.last_answered_by == "b:model-b"
    [switch] = events.of(EventType.LLM_FAILOVER)
    assert switch.data["failed"] == "a:model-a"
    assert switch.data["next"] == "b:model-b"
    assert switch.data["error_kind"] == "network"


async def test_member_model_override_is_passed_down() -> None:
    shared = ScriptedProvider([Fail(ErrorKind.RATE_LIMIT), Reply("cheap")], name="s", model="big")
    chain = FailoverProvider([FailoverMember(shared), FailoverMember(shared, "small")])
    done = await chain.complete(USER)
    assert done.model == "small"
    assert [c.options.model for c in shared.calls] == [None, "small"]


@pytest.mark.parametrize("kind", [ErrorKind.INVALID_REQUEST, ErrorKind.CONTEXT_OVERFLOW])
async def test_request_errors_do_not_fail_over(kind: ErrorKind) -> None:
    backup = ScriptedProvider([Reply("unused")], name="b")
    chain = FailoverProvider([ScriptedProvider([Fail(kind)], name="a"), backup])
    with pytest.raises(ProviderError) as info:
        await chain.complete(USER)
    assert info.value.kind is kind
    assert backup.calls == []


async def test_all_failing_raises_the_last_kind_listing_every_attempt() -> None:
    chain = FailoverProvider(
        [
            ScriptedProvider([Fail(ErrorKind.AUTH, "no key")], name="a"),
            ScriptedProvider([Fail(ErrorKind.RATE_LIMIT, "slow down", retry_after=9)], name="b"),
        ]
    )
    with pytest.raises(ProviderError) as info:
        await chain.complete(USER)
    assert info.value.kind is ErrorKind.RATE_LIMIT
    assert info.value.retry_after == 9
    assert "no key" in info.value.message
    assert "slow down" in info.value.message


async def test_a_provider_that_keeps_failing_cools_down_then_comes_back() -> None:
    clock = FakeClock()
    flaky = ScriptedProvider(
        [Fail(ErrorKind.NETWORK), Fail(ErrorKind.NETWORK), Reply("back")], name="flaky"
    )
    steady = ScriptedProvider([Reply("s1"), Reply("s2"), Reply("s3")], name="steady")
    chain = FailoverProvider([flaky, steady], failure_threshold=2, cooldown_seconds=30, clock=clock)
    assert (await chain.complete(USER)).provider == "steady"
    assert (await chain.complete(USER)).provider == "steady"
    assert chain.health()[0].cooling_until == 1030.0
    assert (await chain.complete(USER)).provider == "steady"
    assert len(flaky.calls) == 2  # skipped while cooling
    clock.now = 1031.0
    assert (await chain.complete(USER)).message.text == "back"
    assert chain.health()[0].failures == 0


async def test_every_member_cooling_still_tries_in_order() -> None:
    clock = FakeClock()
    only = ScriptedProvider([Fail(ErrorKind.NETWORK), Reply("ok")], name="only")
    chain = FailoverProvider([only], failure_threshold=1, cooldown_seconds=60, clock=clock)
    with pytest.raises(ProviderError):
        await chain.complete(USER)
    assert (await chain.complete(USER)).message.text == "ok"


async def test_retry_after_extends_the_cooldown() -> None:
    clock = FakeClock()
    chain = FailoverProvider(
        [
            ScriptedProvider([Fail(ErrorKind.RATE_LIMIT, retry_after=300)], name="a"),
            ScriptedProvider([Reply("b")], name="b"),
        ],
        failure_threshold=1,
        cooldown_seconds=10,
        clock=clock,
    )
    await chain.complete(USER)
    assert chain.health()[0].cooling_until == 1300.0


async def test_stream_fails_over_before_the_first_chunk_only() -> None:
    chain = FailoverProvider(
        [
            ScriptedProvider([Fail(ErrorKind.NETWORK)], name="a"),
            ScriptedProvider([Reply("streamed")], name="b", model="mb"),
        ]
    )
    chunks = [c async for c in chain.stream(USER)]
    assert isinstance(chunks[-1], FinishChunk)
    assert chunks[-1].model == "mb"
    assert chain.last_answered_by == "b:mb"

    backup = ScriptedProvider([Reply("unused")], name="d")
    late = FailoverProvider(
        [ScriptedProvider([Fail(ErrorKind.NETWORK, after_chunks=1)], name="c"), backup]
    )
    with pytest.raises(ProviderError):
        await collect(late.stream(USER))
    assert backup.calls == []


async def test_chain_from_config_over_real_http() -> None:
    async with (
        FakeOpenAIServer([HttpFault.server_error(502)]) as primary_server,
        FakeAnthropicServer([FakeReply("claude here")]) as backup_server,
    ):
        providers = {
            "main": ProviderSettings(
                base_url=primary_server.base_url, model="gpt-4o", fallbacks=["claude"]
            ),
            "claude": ProviderSettings.model_validate(
                {"kind": "anthropic", "base_url": backup_server.base_url}
            ),
        }
        chain = build_provider_chain("main", providers)
        assert isinstance(chain, FailoverProvider)
        done = await chain.complete(USER)
        await chain.close()
    assert done.message.text == "claude here"
    assert (done.provider, done.model) == ("claude", "claude-sonnet-4-5")
    assert len(primary_server.requests) == 1


def test_registry_config_errors_are_actionable() -> None:
    with pytest.raises(ProviderConfigError) as info:
        build_provider_chain("missing", {"other": ProviderSettings()})
    assert "[core.providers.missing]" in info.value.message
    with pytest.raises(ProviderConfigError) as info:
        build_provider_chain("a", {"a": ProviderSettings(fallbacks=["ghost"])})
    assert "ghost" in info.value.message
    with pytest.raises(ProviderConfigError) as info:
        build_provider_chain("a", {"a": ProviderSettings(base_url="")})
    assert info.value.key == "base_url"
    assert info.value.kind is ErrorKind.INVALID_REQUEST
    with pytest.raises(ProviderConfigError) as info:
        build_provider_chain("a", {"a": ProviderSettings(model=" ")})
    assert info.value.key == "model"
    with pytest.raises(ProviderConfigError):
        build_provider_chain("a", {"a": ProviderSettings(base_url="ftp://x")})


def test_fallbacks_accept_names_and_tables() -> None:
    s = ProviderSettings.model_validate({"fallbacks": ["b", {"provider": "c", "model": "small"}]})
    assert [f.describe() for f in s.fallbacks] == ["b", "c:small"]
