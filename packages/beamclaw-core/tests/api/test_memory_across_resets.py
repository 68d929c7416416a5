"""Issue 26 through Core with the scripted provider: short-term memory carried across a
reset (only the last exchanges, never nested, not the heartbeat's), auto-context within
its budget and deadline, and injected blocks that compaction and the flush never store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.compaction import FLUSH_INSTRUCTIONS
from beamclaw_core.loop import Compacted
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import Capabilities, estimate_tokens
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.sessions.memory_context import AUTO_CONTEXT_LABEL, format_auto_context
from beamclaw_core.sessions.short_term import SHORT_TERM_END, SHORT_TERM_LABEL
from beamclaw_core.testing import (
    CallTool,
    EchoTool,
    Reply,
    ScriptedProvider,
    VirtualTime,
    quiet_core_settings,
)
from beamclaw_memory import (
    MemoryCategory,
    MemorySettings,
    SearchHit,
    create_memory_service,
)

from .conftest import CountingMemory

ADDR = SessionAddress("local:ann", "default", "tui")


def _injected(messages: Iterable[Message], label: str) -> list[str]:
    return [m.text for m in messages if m.role is Role.SYSTEM and m.text.startswith(label)]


def _carried(provider: ScriptedProvider) -> list[str]:
    return _injected(provider.calls[-1].messages, SHORT_TERM_LABEL)


async def _say(core: Core, text: str, **kw: Any) -> str:
    return await (await core.send(ADDR, text, **kw)).text()


async def test_a_reset_carries_the_last_exchanges_and_only_those(
    make_core: Callable[..., Core],
) -> None:
    provider = ScriptedProvider([Reply(f"answer {n}") for n in range(1, 5)] + [Reply("fresh")])
    core = make_core(provider, settings=quiet_core_settings(short_term={"exchanges": 2}))
    await core.start(maintenance=False)
    for n in range(1, 4):
        assert await _say(core, f"question {n}") == f"answer {n}"
    assert _carried(provider) == [], "nothing is carried before a reset"
    assert await _say(core, "/reset") == "Session reset."
    assert await _say(core, "What did we talk about?") == "answer 4"
    [block] = _carried(provider)
    assert block.endswith(SHORT_TERM_END)
    assert "user: question 2\nyou: answer 2\nuser: question 3\nyou: answer 3" in block
    assert "question 1" not in block, "only the last two exchanges"
    history = await core.history((await core.send(ADDR, "/status")).session_id)
    assert not any(SHORT_TERM_LABEL in m.text for m in history), "view-only, never stored"
    # every request of the new session keeps the same block (a stable prefix)
    assert await _say(core, "and now?") == "fresh"
    assert _carried(provider) == [block]


async def test_the_block_never_nests_across_two_resets(
    make_core: Callable[..., Core],
) -> None:
    provider = ScriptedProvider(
        [
            Reply("one"),
            Reply(f"Quoting: {SHORT_TERM_LABEL} user: question A {SHORT_TERM_END} right?"),
            Reply("three"),
        ]
    )
    core = make_core(provider, settings=quiet_core_settings())
    await core.start(maintenance=False)
    await _say(core, "question A")
    await _say(core, "/reset")
    await _say(core, "question B")
    first_block = _carried(provider)
    assert len(first_block) == 1 and "question A" in first_block[0]
    await _say(core, "/reset")
    await _say(core, "question C")
    [block] = _carried(provider)
    assert block.count(SHORT_TERM_LABEL) == 1 and block.count(SHORT_TERM_END) == 1
    assert "user: question A\nyou: one\nuser: question B\nyou: Quoting: right?" in block


async def test_scheduled_turns_are_not_carried_and_a_restart_keeps_the_block(
    make_core: Callable[..., Core],
) -> None:
    provider = ScriptedProvider([Reply("noted"), Reply("HEARTBEAT_OK"), Reply("hello again")])
    core = make_core(provider, settings=quiet_core_settings())
    await core.start(maintenance=False)
    await _say(core, "my plant needs water on Fridays")
    await _say(core, "[Heartbeat 09:00] check your tasks", scheduled=True)
    await _say(core, "/new")
    await core.stop()
    provider.add(Reply("after the restart"))
    again = make_core(provider, settings=quiet_core_settings())
    await again.start(maintenance=False)
    assert await _say(again, "hi") == "hello again"
    [block] = _carried(provider)
    assert "user: my plant needs water on Fridays\nyou: noted" in block
    assert "Heartbeat" not in block and "HEARTBEAT_OK" not in block


async def test_short_term_memory_can_be_turned_off(make_core: Callable[..., Core]) -> None:
    provider = ScriptedProvider([Reply("one"), Reply("two")])
    core = make_core(provider, settings=quiet_core_settings(short_term={"enabled": False}))
    await core.start(maintenance=False)
    await _say(core, "question")
    await _say(core, "/reset")
    await _say(core, "again")
    assert _carried(provider) == []


async def _memory(delay: float = 0.0) -> CountingMemory:
    memory = CountingMemory(
        create_memory_service(MemorySettings(backend="memory"), None), delay=delay
    )
    for n in range(1, 6):
        await memory.store(
            "default",
            f"cat-{n}",
            f"Fact {n} about Ann's cat Pixel: " + "she likes sunny windows. " * 12,
            MemoryCategory.CORE,
            source="test",
        )
    return memory


async def test_auto_context_respects_its_token_budget(make_core: Callable[..., Core]) -> None:
    memory = await _memory()
    provider = ScriptedProvider([Reply("Pixel!"), Reply("Pixel again")])
    core = make_core(
        provider,
        memory=memory,
        memory_settings=MemorySettings(auto_context_limit=5, auto_context_max_tokens=200),
    )
    await core.start(maintenance=False)
    assert await _say(core, "What does my cat Pixel like?") == "Pixel!"
    [block] = _injected(provider.calls[-1].messages, AUTO_CONTEXT_LABEL)
    assert len(block) / 4 <= 200
    assert "1. (core" in block and "3. (core" not in block, "hits past the budget left out"
    hits = [
        SearchHit(
            key=f"k{n}",
            text="she likes sunny windows " * 12,
            score=1.0,
            category=MemoryCategory.CORE,
        )
        for n in range(1, 6)
    ]
    roomy = format_auto_context(hits, 1500)
    assert roomy is not None and "5. (core" in roomy
    tight = format_auto_context(hits, 200)
    assert tight is not None and estimate_tokens(tight) <= 200 and "2. (core" not in tight
    assert format_auto_context(hits, 20) is None, "not even one hit fits: no block"


async def test_auto_context_leaves_out_what_the_model_already_reads(
    make_core: Callable[..., Core],
) -> None:
    memory = CountingMemory(create_memory_service(MemorySettings(backend="memory"), None))
    for key in ("a", "b"):  # one fact, stored twice
        await memory.store(
            "default", f"locker-{key}", "Ann's locker code is 4711.", MemoryCategory.CORE
        )
    provider = ScriptedProvider([Reply("Noted.")], repeat_last=True)
    core = make_core(
        provider, memory=memory, settings=quiet_core_settings(short_term={"enabled": False})
    )
    await core.start(maintenance=False)
    await _say(core, "Remember: my bike is blue and my locker code matters.")
    await core.flush_indexing()
    await _say(core, "What colour is my bike, and my locker code?")
    [block] = _injected(provider.calls[-1].messages, AUTO_CONTEXT_LABEL)
    assert block.count("locker code is 4711") == 1, "the same text once"
    assert "bike is blue" not in block, "this session's message is in the view already"
    assert await _say(core, "/reset") == "Session reset."
    await _say(core, "What colour is my bike?")
    [block] = _injected(provider.calls[-1].messages, AUTO_CONTEXT_LABEL)
    assert "user: Remember: my bike is blue" in block, "before the reset: recalled"


async def test_a_long_view_never_crowds_a_memory_out_of_the_auto_context(
    make_core: Callable[..., Core],
) -> None:
    """The session's own messages match the question best, and all of them are in the
    view: the search leaves them out before it ranks, so the one stored fact is still
    among the two hits searched for (``auto_context_limit`` 1), not crowded out."""
    memory = CountingMemory(create_memory_service(MemorySettings(backend="memory"), None))
    await memory.store("default", "locker", "Ann's locker code is 4711.", MemoryCategory.CORE)
    provider = ScriptedProvider([Reply("Noted.")], repeat_last=True)
    core = make_core(
        provider,
        memory=memory,
        settings=quiet_core_settings(short_term={"enabled": False}),
        memory_settings=MemorySettings(auto_context_limit=1),
    )
    await core.start(maintenance=False)
    for n in range(4):
        await _say(core, f"My locker, my locker code, the locker code {n}!")
        await core.flush_indexing()
    await _say(core, "What is my locker code?")
    [block] = _injected(provider.calls[-1].messages, AUTO_CONTEXT_LABEL)
    assert "locker code is 4711" in block
    assert "the locker code" not in block, "in the view already"


async def test_a_slow_memory_backend_is_skipped_without_blocking_the_turn(
    make_core: Callable[..., Core],
) -> None:
    memory = await _memory(delay=1.5)
    provider = ScriptedProvider([Reply("quick"), Reply("still quick")])
    core = make_core(
        provider, memory=memory, memory_settings=MemorySettings(auto_context_deadline_ms=100)
    )
    await core.start(maintenance=False)
    started = time.monotonic()
    assert await _say(core, "What does my cat Pixel like?") == "quick"
    assert await _say(core, "And Pixel's toys?") == "still quick"
    assert time.monotonic() - started < 1.2, "the turns did not wait for the search"
    for call in provider.calls:
        assert _injected(call.messages, AUTO_CONTEXT_LABEL) == []
    assert len(memory.searches) == 1, "no second lookup piles on a slow backend"


async def test_compaction_and_the_flush_do_not_store_injected_blocks(
    make_core: Callable[..., Core], vt: VirtualTime
) -> None:
    memory = await _memory()
    remember = EchoTool("memory_store")
    provider = ScriptedProvider(
        [Reply("Pixel is a cat " * 12), Reply("She likes windows " * 8), Reply("Yes " * 20)],
        capabilities=Capabilities(context_window=2000),
    )
    summariser = ScriptedProvider([Reply("A summary of the talk about Pixel.")])
    settings = quiet_core_settings(
        loop={"compaction_threshold_pct": 100, "compaction_target_pct": 2},
        maintenance={"idle_compaction_minutes": 10, "check_interval_seconds": 60},
    )
    core = make_core(
        provider,
        remember,
        settings=settings,
        virtual=True,
        compaction_provider=summariser,
        memory=memory,
        memory_settings=MemorySettings(auto_context_max_tokens=300),
    )
    await core.start(maintenance=True)
    await _say(core, "Tell me about my cat Pixel " * 5)
    await _say(core, "/reset")
    handle = await core.send(ADDR, "What does Pixel like? " * 5)
    await handle.text()
    await _say(core, "Does she like windows?")
    request = provider.calls[-1].messages
    assert _injected(request, AUTO_CONTEXT_LABEL) and _injected(request, SHORT_TERM_LABEL)
    provider.add(CallTool("memory_store", {"text": "Ann has a cat"}), Reply("NO_REPLY"))
    events = aiter(await core.subscribe(handle.session_id))
    for _ in range(11):  # idle maintenance compaction, one 60 s pass at a time
        await vt.until_timer(60)
        await vt.advance(60)
    async with asyncio.timeout(10):
        while not isinstance(await anext(events), Compacted):
            pass
    assert len(summariser.calls) == 1
    flush = provider.calls[-2].messages
    assert flush[-1].text == FLUSH_INSTRUCTIONS
    assert _injected(flush, AUTO_CONTEXT_LABEL) == [] and _injected(flush, SHORT_TERM_LABEL) == []
    assert remember.calls == [{"text": "Ann has a cat"}]
    assert not any(
        AUTO_CONTEXT_LABEL in m.text or SHORT_TERM_LABEL in m.text
        for m in summariser.calls[0].messages
    )
    rows = await core.store.messages(handle.session_id)
    assert any(r.kind == "summary" for r in rows)
    stored = [str(r.data) if r.message is None else r.message.text for r in rows]
    assert not any(AUTO_CONTEXT_LABEL in t or SHORT_TERM_LABEL in t for t in stored)
