"""Through Core: an LLM call streams while someone wants drafts, and is one non-streaming
request when nobody does; either way the turn ends with the same answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import Retrying, TextChunk, ToolFinished, TurnDone
from beamclaw_core.messages import Usage
from beamclaw_core.providers import ErrorKind
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, EchoTool, Fail, Reply, ScriptedProvider

from .conftest import VirtualTime, collect

ADDR = SessionAddress("api:ann", "default", "api")


async def test_nobody_wants_drafts_so_each_call_is_one_request(
    make_core: Callable[..., Any],
) -> None:
    provider = ScriptedProvider(
        [CallTool("echo", {"text": "x"}), Reply("<think>planning</think>done: echo:x")]
    )
    core: Core = make_core(provider, EchoTool())
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "go", drafts=False)
    events = await collect(handle.events())
    assert [c.stream for c in provider.calls] == [False, False]
    assert not [e for e in events if isinstance(e, TextChunk)]
    assert any(isinstance(e, ToolFinished) for e in events)
    done = events[-1]
    assert isinstance(done, TurnDone) and done.text == "done: echo:x"  # thinking stripped
    history = await core.history(handle.session_id)
    assert history[-1].text == "done: echo:x"


async def test_a_watcher_of_the_session_gets_drafts_all_the_same(
    make_core: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([Reply("first"), Reply("streamed for the watcher")], chunk_size=4)
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    sid = core.session_id(ADDR)
    assert await (await core.send(ADDR, "one", drafts=False)).text() == "first"
    watcher = await core.subscribe(sid)
    handle = await core.send(ADDR, "two", drafts=False)
    await handle.result()
    seen = []
    async for event in watcher:
        seen.append(event)
        if event.terminal:
            break
    assert [c.stream for c in provider.calls] == [False, True]
    assert "".join(e.text for e in seen if isinstance(e, TextChunk)) == "streamed for the watcher"


async def test_senders_get_drafts_by_default(make_core: Callable[..., Any]) -> None:
    provider = ScriptedProvider([Reply("as it streams")], chunk_size=3)
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    events = await collect((await core.send(ADDR, "hi")).events())
    assert [c.stream for c in provider.calls] == [True]
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "as it streams"


async def test_a_failed_non_streaming_call_is_retried_like_a_streamed_one(
    make_core: Callable[..., Any], vt: VirtualTime
) -> None:
    provider = ScriptedProvider(
        [
            Fail(ErrorKind.RATE_LIMIT, "slow down", retry_after=3),
            Reply("second try", usage=Usage(prompt_tokens=4, completion_tokens=2)),
        ]
    )
    core: Core = make_core(provider)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "hello", drafts=False)
    events = handle.events()
    retrying = None
    async for event in events:
        if isinstance(event, Retrying):
            retrying = event
            break
    assert retrying is not None and (retrying.delay, retrying.error_kind) == (3.0, "rate_limit")
    await vt.until_timer(3)
    await vt.advance(3)
    rest = await collect(events)
    done = rest[-1]
    assert isinstance(done, TurnDone) and done.text == "second try"
    assert done.usage.prompt_tokens == 4 and done.usage.completion_tokens == 2
    assert [c.stream for c in provider.calls] == [False, False]
