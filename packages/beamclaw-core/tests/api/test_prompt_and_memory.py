"""The default prompt (skills, timezone) and memory wiring (auto-context, transcripts)."""

from __future__ import annotations

import asyncio
import gc
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.api import Core, StaticPrompt, WorkspacePrompt
from beamclaw_core.loop import TurnDone
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import request_fold
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.sessions.memory_context import AUTO_CONTEXT_LABEL
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_core.workspace import create_agent
from beamclaw_memory import (
    MemoryCategory,
    MemorySettings,
    SearchMode,
    create_memory_service,
)
from beamclaw_obs import beamclaw_home
from beamclaw_tools import SessionRef

from .conftest import CountingMemory, EchoTool, make_settings

ADDR = SessionAddress("local:ann", "default", "tui")

WEATHER_SKILL = """---
name: weather
description: Forecasts for a city
metadata:
  emoji: "☔"
---
# Weather
Run `{baseDir}/scripts/wx.sh <city>` to get the forecast.
"""


def _write_skill(agent: str = "default") -> Path:
    directory = beamclaw_home() / "agents" / agent / "skills" / "weather"
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(WEATHER_SKILL, encoding="utf-8")
    return directory


def _system_text(messages: Iterable[Message]) -> str:
    return "\n".join(m.text for m in messages if m.role is Role.SYSTEM)


def _settings(**core: Any) -> CoreSettings:
    return make_settings().model_copy(update=core)


async def test_workspace_prompt_lists_skills_and_promotes_the_named_one() -> None:
    create_agent("default")
    skill_dir = _write_skill()
    session = SessionRef(session_id="s", agent_id="default")
    prompt = WorkspacePrompt()

    plain = await prompt(session, None)
    kinds = [m.meta.get("kind") for m in plain]
    assert "skills" in kinds
    skills = next(m.text for m in plain if m.meta.get("kind") == "skills")
    # always-skill (bundled memory-keeper) in full; weather only listed
    assert "Skill: memory-keeper" in skills
    assert "- ☔ weather: Forecasts for a city" in skills
    assert "wx.sh" not in skills

    promoted = await prompt(session, None, "What is the weather in Paris?")
    skills = next(m.text for m in promoted if m.meta.get("kind") == "skills")
    assert "### ☔ Skill: weather" in skills
    assert f"{skill_dir}/scripts/wx.sh <city>" in skills
    assert "{baseDir}" not in skills
    # skills come after the bootstrap files and before the environment block
    assert kinds.index("skills") > kinds.index("bootstrap")
    assert kinds.index("skills") < kinds.index("environment")


async def test_core_turn_prompt_promotes_skill_from_the_user_message(
    make_core: Callable[..., Core],
) -> None:
    create_agent("default")
    _write_skill()
    provider = ScriptedProvider([CallTool("echo", {"text": "x"}), Reply("Sunny.")])
    core = make_core(provider, EchoTool(), system_prompt=None)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "weather in Lyon tomorrow?")
    assert isinstance(await handle.result(), TurnDone)
    for call in provider.calls:  # every step of the turn sees the promoted skill
        assert "Skill: weather" in _system_text(call.messages)
    assert not any(m.role is Role.SYSTEM for m in await core.history(handle.session_id))


async def test_context_command_counts_the_skills_section(make_core: Callable[..., Core]) -> None:
    create_agent("default")
    _write_skill()
    core = make_core(ScriptedProvider([Reply("hi")]), system_prompt=None)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "hello")).result()
    text = await (await core.send(ADDR, "/context")).text()
    skills_line = next(line for line in text.splitlines() if line.strip().startswith("skills"))
    assert int(skills_line.split()[1]) > 0


async def test_configured_timezone_reaches_the_environment_block(
    make_core: Callable[..., Core],
) -> None:
    create_agent("default")
    provider = ScriptedProvider([Reply("hi")])
    core = make_core(provider, settings=_settings(timezone="Asia/Tokyo"), system_prompt=None)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "what time is it?")).result()
    environment = next(
        m.text for m in provider.calls[0].messages if m.meta.get("kind") == "environment"
    )
    assert "Asia/Tokyo" in environment


async def test_a_two_argument_prompt_source_still_works(make_core: Callable[..., Core]) -> None:
    seen: list[float | None] = []

    async def legacy(session: SessionRef, last_activity_at: float | None) -> list[Message]:
        seen.append(last_activity_at)
        return [Message.system("legacy prompt")]

    provider = ScriptedProvider([Reply("ok")])
    core = make_core(provider, system_prompt=legacy)
    await core.start(maintenance=False)
    assert await (await core.send(ADDR, "hi")).text() == "ok"
    assert seen
    assert provider.calls[0].messages[0].text == "legacy prompt"


async def test_the_prompt_is_built_once_per_llm_request(make_core: Callable[..., Core]) -> None:
    # Measuring the context and sending the request share one build; a tool step's
    # result changes the view, so the next request builds it again.
    builds: list[str] = []

    async def source(
        session: SessionRef, last_activity_at: float | None, latest_user_message: str | None
    ) -> list[Message]:
        builds.append(session.session_id)
        return [Message.system(f"prompt {len(builds)}")]

    provider = ScriptedProvider([Reply("one")])
    core = make_core(provider, EchoTool(), system_prompt=source)
    await core.start(maintenance=False)
    assert await (await core.send(ADDR, "hi")).text() == "one"
    assert len(builds) == 1
    provider.add(CallTool("echo", {"text": "x"}), Reply("two"))
    assert await (await core.send(ADDR, "again")).text() == "two"
    assert len(builds) == 3
    assert [c.messages[0].text for c in provider.calls] == ["prompt 1", "prompt 2", "prompt 3"]


def _memory(**kw: Any) -> CountingMemory:
    inner = create_memory_service(MemorySettings(backend="memory"), None)
    return CountingMemory(inner, **kw)


@pytest.mark.parametrize("auto_context", [True, False])
async def test_auto_context_injects_memories_into_the_view_only(
    make_core: Callable[..., Core], auto_context: bool
) -> None:
    memory = _memory()
    await memory.store(
        "default", "pet", "Ann's cat is called Pixel.", MemoryCategory.CORE, source="test"
    )
    provider = ScriptedProvider([CallTool("echo", {"text": "x"}), Reply("Pixel!")])
    core = make_core(
        provider,
        EchoTool(),
        memory=memory,
        memory_settings=MemorySettings(auto_context=auto_context, auto_context_limit=2),
    )
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "What is my cat called?")
    assert await handle.text() == "Pixel!"
    for call in provider.calls:
        system = [m for m in call.messages if m.role is Role.SYSTEM]
        injected = [m for m in system if m.text.startswith(AUTO_CONTEXT_LABEL)]
        if auto_context:
            assert len(injected) == 1
            assert "Pixel" in injected[0].text
            # after the system prompt, before the conversation
            assert call.messages.index(injected[0]) == len(system) - 1
        else:
            assert injected == []
    # one search for the whole turn (both LLM steps, plus the context measurement)
    assert memory.searches == (["What is my cat called?"] if auto_context else [])
    history = await core.history(handle.session_id)
    assert not any(AUTO_CONTEXT_LABEL in m.text for m in history)


async def test_a_turns_auto_context_ends_with_the_turn(make_core: Callable[..., Core]) -> None:
    """Idle sessions keep no auto-context in memory: of more sessions' turns than the
    request fold remembers, only the fold's runs (and the memo's last list) keep one."""
    memory = _memory()
    pet = f"Pixel{uuid.uuid4().hex}"  # only this test's messages hold it (others' may live)
    await memory.store(
        "default", "pet", f"Ann's cat is called {pet}.", MemoryCategory.CORE, source="test"
    )
    sessions = request_fold.KEEP + 8
    provider = ScriptedProvider([Reply("Pixel!") for _ in range(sessions)])
    core = make_core(
        provider,
        memory=memory,
        memory_settings=MemorySettings(auto_context=True, auto_context_limit=2),
    )
    await core.start(maintenance=False)
    for n in range(sessions):
        address = SessionAddress(f"local:u{n}", "default", "tui")
        assert await (await core.send(address, "What is my cat called?")).text() == "Pixel!"
    assert len(memory.searches) == sessions
    provider.calls.clear()  # the double's record of the requests
    gc.collect()
    alive = [
        o
        for o in gc.get_objects()
        if isinstance(o, Message) and AUTO_CONTEXT_LABEL in o.text and pet in o.text
    ]
    assert len(alive) <= request_fold.KEEP + 1, "idle sessions hold their turns' auto-context"


async def test_auto_context_finds_memory_md_as_it_is_on_disk(
    make_core: Callable[..., Core],
) -> None:
    workspace = beamclaw_home() / "agents" / "default"
    workspace.mkdir(parents=True)
    md = workspace / "MEMORY.md"
    md.write_text("# Pets\nAnn's cat is called Pixel.\n", encoding="utf-8")
    memory = _memory()
    provider = ScriptedProvider([Reply("Pixel!"), Reply("Mochi!")])
    core = make_core(
        provider,
        memory=memory,
        memory_settings=MemorySettings(auto_context=True, auto_context_limit=2),
    )
    await core.start(maintenance=False)

    def injected() -> str:
        system = [m.text for m in provider.calls[-1].messages if m.role is Role.SYSTEM]
        return "\n".join(t for t in system if t.startswith(AUTO_CONTEXT_LABEL))

    assert await (await core.send(ADDR, "What is my cat called?")).text() == "Pixel!"
    assert "(core: MEMORY.md lines 1-2, " in injected()
    assert "# Pets Ann's cat is called Pixel." in injected()
    md.write_text("# Pets\nAnn's cat is now called Mochi.\n", encoding="utf-8")  # an editor
    assert await (await core.send(ADDR, "And the cat's name now?")).text() == "Mochi!"
    assert "Mochi" in injected()
    assert "Pixel." not in injected()


async def test_finished_turns_are_indexed_in_the_background(
    make_core: Callable[..., Core],
) -> None:
    memory = _memory()
    provider = ScriptedProvider([Reply("The capital of Burkina Faso is Ouagadougou.")])
    core = make_core(provider, memory=memory)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "Tell me a capital city")
    await handle.result()
    await core.stop()  # drains background indexing
    found = await memory.search("default", "Ouagadougou", mode=SearchMode.KEYWORD)
    assert [h.category for h in found.hits] == [MemoryCategory.CONVERSATION]
    assert "Ouagadougou" in found.hits[0].text


async def test_transcript_indexing_can_be_turned_off(make_core: Callable[..., Core]) -> None:
    """``[memory] index_transcripts = false``: no conversation reaches the search index
    (its keyword index lives in memory and grows with every message it holds)."""
    memory = _memory()
    provider = ScriptedProvider([Reply("The capital of Burkina Faso is Ouagadougou.")])
    settings = MemorySettings(backend="memory", index_transcripts=False, auto_context=False)
    core = make_core(provider, memory=memory, memory_settings=settings)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "Tell me a capital city")).result()
    await core.flush_indexing()
    await core.stop()
    assert memory.indexed == []
    assert not (await memory.search("default", "Ouagadougou", mode=SearchMode.KEYWORD)).hits


async def test_turns_ending_together_are_indexed_in_one_batch(
    make_core: Callable[..., Core],
) -> None:
    memory = _memory()
    provider = ScriptedProvider([Reply("Noted, Ana.")], repeat_last=True)
    core = make_core(provider, memory=memory)
    await core.start(maintenance=False)
    users = [SessionAddress(f"local:{name}", "default", "tui") for name in ("ana", "bo", "cy")]
    handles = await asyncio.gather(*(core.send(a, "remember me") for a in users))
    await asyncio.gather(*(h.result() for h in handles))
    for _ in range(200):  # the batch window passes on its own
        if memory.indexed:
            break
        await asyncio.sleep(0.01)
    assert memory.indexed == [{h.session_id for h in handles}]
    # the next turn of one session indexes only that session's new messages
    await (await core.send(users[0], "think of Zanzibar")).result()
    await core.stop()  # flushes the batch without waiting out its window
    assert memory.indexed[1:] == [{handles[0].session_id}]
    found = await memory.search("default", "Zanzibar", mode=SearchMode.KEYWORD)
    assert "user: think of Zanzibar" in [h.text for h in found.hits]


async def test_flush_indexing_indexes_without_waiting_out_the_window(
    make_core: Callable[..., Core],
) -> None:
    memory = _memory()
    provider = ScriptedProvider([Reply("Timbuktu is in Mali.")], repeat_last=True)
    core = make_core(provider, memory=memory)
    await core.start(maintenance=False)
    await (await core.send(ADDR, "where is Timbuktu?")).result()
    # the batch window (0.1 s) has not passed yet: only the flush can have indexed it
    await core.flush_indexing()
    assert len(memory.indexed) == 1
    found = await memory.search("default", "Timbuktu", mode=SearchMode.KEYWORD)
    assert found.hits
    await core.flush_indexing()  # nothing scheduled: returns at once
    assert len(memory.indexed) == 1


async def test_indexing_failures_never_fail_the_turn(make_core: Callable[..., Core]) -> None:
    memory = _memory(fail_indexing=True)
    provider = ScriptedProvider([Reply("one"), Reply("two")])
    core = make_core(provider, memory=memory)
    await core.start(maintenance=False)
    assert await (await core.send(ADDR, "first")).text() == "one"
    assert await (await core.send(ADDR, "second")).text() == "two"


async def test_static_prompt_accepts_the_latest_message() -> None:
    session = SessionRef(session_id="s", agent_id="default")
    assert (await StaticPrompt("x")(session, time.time(), "hello"))[0].text == "x"


async def test_changed_added_and_removed_skills_are_seen_at_the_next_request() -> None:
    create_agent("default")
    session = SessionRef(session_id="s", agent_id="default")
    prompt = WorkspacePrompt()

    async def skills_text() -> str:
        messages = await prompt(session, None, "weather please")
        return next(m.text for m in messages if m.meta.get("kind") == "skills")

    assert "weather" not in await skills_text()
    skill_dir = _write_skill()
    assert "wx.sh" in await skills_text()
    (skill_dir / "SKILL.md").write_text(
        WEATHER_SKILL.replace("to get the forecast", "for a much longer forecast"),
        encoding="utf-8",
    )
    assert "for a much longer forecast" in await skills_text()
    (skill_dir / "SKILL.md").unlink()
    assert "weather" not in await skills_text()
