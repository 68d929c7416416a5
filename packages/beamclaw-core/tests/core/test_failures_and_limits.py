"""Through Core: limits end turns with a message naming them; failures end in a defined
state with a message to the user; retries and overflow recovery are visible to clients."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import (
    Compacted,
    LimitReached,
    Retrying,
    TextChunk,
    ToolFinished,
    TurnDone,
    TurnError,
)
from beamclaw_core.loop.history import history_problems
from beamclaw_core.loop.steps import EMPTY_REPLY_TEXT
from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers import CompletionOptions, ErrorKind, StreamChunk
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Fail, Hang, Reply, ScriptedProvider

from .conftest import EchoTool, VirtualTime, collect, first, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")


async def assert_recovers(core: Core, provider: ScriptedProvider, text: str = "fine") -> None:
    """The session is not stuck: the next message gets an answer."""
    provider.add(Reply(text, usage=Usage(total_tokens=5)))
    assert await (await core.send(ADDR, "are you there?")).text() == text
    assert (await core.status(core.session_id(ADDR))).state == "idle"


async def test_turn_wall_clock_limit_stops_a_provider_that_never_finishes(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Hang()])
    core: Core = make_core(provider, settings=make_settings(loop={"turn_timeout_seconds": 30}))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "think forever")
    await vt.until_timer(30)
    await vt.advance(30)
    events = await collect(handle.events())
    limit = next(e for e in events if isinstance(e, LimitReached))
    assert limit.limit == "turn_timeout"
    assert "time limit of 30 seconds" in limit.message
    done = events[-1]
    assert isinstance(done, TurnDone) and limit.message in done.text
    history = await core.history(handle.session_id)
    assert history[-1].text == limit.message
    await assert_recovers(core, provider)


async def test_turn_wall_clock_limit_mid_tool_answers_the_call(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    stuck = EchoTool("stuck", gate=asyncio.Event(), timeout=3600)
    provider = ScriptedProvider([CallTool("stuck", {"text": "x"})])
    core: Core = make_core(
        provider, stuck, settings=make_settings(loop={"turn_timeout_seconds": 30})
    )
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    await stuck.started.wait()
    await vt.advance(30)
    limit = await first(handle.events(), LimitReached)
    assert limit.limit == "turn_timeout"
    assert isinstance(await handle.result(), TurnDone)
    history = await core.history(handle.session_id)
    assert history_problems(history) == []
    assert history[2].text == "Not run: the turn time limit was reached."
    await assert_recovers(core, provider)


async def test_per_turn_token_limit_names_the_limit(make_core: Callable[..., Any]) -> None:
    echo = EchoTool()
    provider = ScriptedProvider(
        [CallTool("echo", {"text": "a"}, usage=Usage(prompt_tokens=90, total_tokens=120))]
    )
    core: Core = make_core(
        provider, echo, settings=make_settings(loop={"max_tokens_per_turn": 100})
    )
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    limit = await first(handle.events(), LimitReached)
    assert limit.limit == "max_tokens_per_turn"
    assert "120 tokens, over the limit of 100" in limit.message
    assert echo.calls == [], "the tool call of the response over the limit does not run"
    history = await core.history(handle.session_id)
    assert history_problems(history) == []
    assert history[2].text == "Not run: the max_tokens_per_turn limit was reached."
    await assert_recovers(core, provider)


async def test_daily_cost_budget_stops_turns_until_the_next_day(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider([Reply("pricey", usage=Usage(total_tokens=10, cost_usd=0.02))])
    core: Core = make_core(provider, settings=make_settings(daily_cost_budget_usd=0.01))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "one")
    limit = await first(handle.events(), LimitReached)
    assert limit.limit == "daily_cost_budget"
    assert (await handle.text()).startswith("pricey")
    calls = len(provider.calls)
    second = await core.send(ADDR, "two")
    limit = await first(second.events(), LimitReached)
    assert limit.limit == "daily_cost_budget"
    assert "today's cost budget" in limit.message
    assert len(provider.calls) == calls, "over budget: the provider is not called at all"
    vt.jump(24 * 3600)
    await assert_recovers(core, provider, "a new day")


async def test_context_overflow_compacts_then_retries_once(make_core: Callable[..., Any]) -> None:
    provider = ScriptedProvider(
        [Reply("first answer " * 20), Fail(ErrorKind.CONTEXT_OVERFLOW, "too long"), Reply("fits")]
    )
    summariser = ScriptedProvider([Reply("they talked about the first question")])
    core: Core = make_core(provider, compaction_provider=summariser)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "first question " * 20)).text()
    handle = await core.send(ADDR, "second question")
    events = await collect(handle.events())
    compacted = next(e for e in events if isinstance(e, Compacted))
    assert compacted.summarized_messages >= 1 and not compacted.fallback
    assert isinstance(events[-1], TurnDone) and events[-1].text == "fits"
    retried = provider.calls[-1].messages
    assert any("they talked about the first question" in m.text for m in retried)
    assert retried[-1].text == "second question"
    assert len(await core.history(handle.session_id)) == 4, "raw messages stay stored"


async def test_context_overflow_twice_fails_with_a_message(make_core: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Fail(ErrorKind.CONTEXT_OVERFLOW, "too long")], repeat_last=True)
    core: Core = make_core(provider, compaction_provider=ScriptedProvider([Reply("s")]))
    await core.start(maintenance=False)
    failed = await (await core.send(ADDR, "hi")).result()
    assert isinstance(failed, TurnError) and failed.kind == "context_overflow"
    assert "still too long" in failed.message
    assert len(provider.calls) == 2


async def test_rate_limit_retry_after_is_shown_then_succeeds(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider(
        [
            Fail(ErrorKind.RATE_LIMIT, "slow down", retry_after=7, after_chunks=3),
            Reply("second try worked"),
        ],
        chunk_size=4,
    )
    core: Core = make_core(provider, settings=make_settings(loop={"stream_coalesce_ms": 0}))
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hello")
    events = handle.events()
    seen: list[Any] = []
    async for event in events:
        seen.append(event)
        if isinstance(event, Retrying):
            break
    retrying = seen[-1]
    assert (retrying.attempt, retrying.delay, retrying.error_kind) == (2, 7.0, "rate_limit")
    assert retrying.discard_partial, "text of the failed call was streamed"
    partial = "".join(e.text for e in seen if isinstance(e, TextChunk))
    assert partial and "partial answer".startswith(partial.strip()[:4])
    assert len(provider.calls) == 1
    await vt.until_timer(7)
    await vt.advance(7)
    rest = await collect(events)
    assert "".join(e.text for e in rest if isinstance(e, TextChunk)) == "second try worked"
    assert isinstance(rest[-1], TurnDone) and rest[-1].text == "second try worked"
    assert len(provider.calls) == 2


async def test_retries_are_bounded_then_error(make_core: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Fail(ErrorKind.NETWORK, "502")], repeat_last=True)
    core: Core = make_core(provider, virtual=False)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hi")
    events = await collect(handle.events())
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2, 3]
    failed = events[-1]
    assert isinstance(failed, TurnError) and "Failed after 3 attempts" in failed.message
    assert len(provider.calls) == 3


async def test_auth_error_goes_to_error_and_the_next_message_recovers(
    make_core: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([Fail(ErrorKind.AUTH, "bad key")])
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hi")
    failed = await handle.result()
    assert isinstance(failed, TurnError) and failed.kind == "auth"
    status = await core.status(handle.session_id)
    assert (status.state, status.error) == ("error", "bad key")
    assert len(provider.calls) == 1, "auth errors are never retried"
    await assert_recovers(core, provider)


async def test_a_tool_that_raises_becomes_an_error_result(make_core: Callable[..., Any]) -> None:
    broken = EchoTool("broken", raises=RuntimeError("disk on fire"))
    provider = ScriptedProvider([CallTool("broken", {}), Reply("the tool failed, sorry")])
    core: Core = make_core(provider, broken)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    finished = await first(handle.events(), ToolFinished)
    assert finished.is_error and "disk on fire" in finished.preview
    assert await handle.text() == "the tool failed, sorry"
    history = await core.history(handle.session_id)
    assert history_problems(history) == []
    assert history[2].is_error


async def test_a_tool_that_hangs_past_its_timeout(make_core: Callable[..., Any]) -> None:
    hung = EchoTool("hung", gate=asyncio.Event(), timeout=0.05)
    provider = ScriptedProvider([CallTool("hung", {}), Reply("it timed out")])
    core: Core = make_core(provider, hung)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go")
    finished = await first(handle.events(), ToolFinished)
    assert finished.is_error and "timed out" in finished.preview
    assert await handle.text() == "it timed out"
    assert history_problems(await core.history(handle.session_id)) == []


class RaisingProvider(ScriptedProvider):
    """A provider with a bug: its stream raises a plain exception on the first call."""

    async def stream(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> AsyncIterator[StreamChunk]:
        if not self.calls:
            self.calls.append(self.calls[-1] if self.calls else _record(messages, options))
            raise ValueError("provider bug")
        async for chunk in super().stream(messages, options):
            yield chunk


def _record(messages: list[Message], options: CompletionOptions | None) -> Any:
    from beamclaw_core.testing import ScriptedCall

    return ScriptedCall(tuple(messages), options or CompletionOptions(), True)


async def test_a_provider_bug_is_retried_as_unknown(make_core: Callable[..., Any]) -> None:
    provider = RaisingProvider([Reply("unused slot"), Reply("recovered")])
    core: Core = make_core(provider, virtual=False)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hi")
    retrying = await first(handle.events(), Retrying)
    assert retrying.error_kind == "unknown" and "provider bug" in retrying.message
    assert await handle.text() == "recovered"


async def test_an_empty_reply_is_said_on_every_front_end(make_core: Callable[..., Any]) -> None:
    """Streaming or not, the answer of an empty reply is a sentence, never a blank message,
    and the stored history stays well formed (the sentence stands in for the blank)."""
    provider = ScriptedProvider([Reply(""), Reply("")])
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    streamed = await core.send(ADDR, "hi")
    assert await streamed.text() == EMPTY_REPLY_TEXT
    whole = await core.send(ADDR, "again", drafts=False)
    assert await whole.text() == EMPTY_REPLY_TEXT
    history = await core.history(whole.session_id)
    assert history_problems(history) == []
    answers = [m for m in history if m.role.value == "assistant"]
    assert [m.text for m in answers] == [EMPTY_REPLY_TEXT] * 2
    await assert_recovers(core, provider)
