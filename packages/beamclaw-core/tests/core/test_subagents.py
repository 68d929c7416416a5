"""Sub-agents end to end through Core (REQ-BED-008/009): spawn_agents starts persisted
child conversations, only children have submit_result, children cannot spawn, the
parent waits in AwaitingSubAgents for every result, and cancelling it cancels them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import SPAWN_AGENTS_TOOL, SUBMIT_RESULT_TOOL, Cancelled, ToolStarted
from beamclaw_core.loop.history import history_problems
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Hang, Reply, Rule, ScriptedProvider

from .conftest import EchoTool, first, until

ADDR = SessionAddress("local:ann", "default", "tui")
TASKS = {"tasks": [{"task": "find A"}, {"task": "find B"}, "find C"]}


async def children_of(core: Core, parent: str, count: int) -> list[Any]:
    """The parent's child conversations, once ``count`` of them are persisted."""
    while True:
        found = [r for r in await core.store.list(include_children=True) if r.parent_id == parent]
        if len(found) >= count:
            assert len(found) == count
            return found
        await asyncio.sleep(0.005)


def tool_names(options: CompletionOptions) -> set[str]:
    return {t.name for t in options.tools}


def brain(messages: list[Message], options: CompletionOptions) -> Rule:
    """Parent and children share one provider; the rule reads who is asking."""
    last = messages[-1]
    if SPAWN_AGENTS_TOOL in tool_names(options):  # the parent
        if last.role is Role.USER:
            return CallTool(SPAWN_AGENTS_TOOL, TASKS, id="spawn-1")
        if last.name == SPAWN_AGENTS_TOOL:
            return CallTool(SUBMIT_RESULT_TOOL, {"result": "parents cannot"}, id="sub-p")
        return Reply("Summary: " + messages[-3].text)
    task = next(m.text for m in messages if m.role is Role.USER)
    if last.role is Role.USER:
        if task == "find A":
            return CallTool(SUBMIT_RESULT_TOOL, {"result": "A is 1"})
        if task == "find B":
            return CallTool("gate", {"text": "B"})
        return CallTool(SPAWN_AGENTS_TOOL, {"tasks": ["nested"]}, id="nested-1")
    if task == "find B":
        return Reply("B is 2")
    return Reply("C could not nest: " + last.text)


async def test_spawn_agents_end_to_end(make_core: Callable[..., Any]) -> None:
    gate = asyncio.Event()
    tool = EchoTool("gate", gate=gate)
    provider = ScriptedProvider([brain], repeat_last=True)
    core: Core = make_core(provider, tool, virtual=False)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "research A, B and C")
    parent = handle.session_id
    started = await first(handle.events(), ToolStarted)
    assert started.tool == SPAWN_AGENTS_TOOL
    await tool.started.wait()
    # B is held inside its tool: the parent waits for every child.
    assert (await core.status(parent)).state == "awaiting_subagents"
    children = await children_of(core, parent, 3)
    assert parent not in {r.id for r in children}
    assert [s.session_id for s in await core.list_sessions()] == [parent], "children hidden"
    gate.set()
    answer = await handle.text()

    history = await core.history(parent)
    assert history_problems(history) == []
    spawn_result = next(m for m in history if m.name == SPAWN_AGENTS_TOOL)
    results = json.loads(spawn_result.text)
    assert [r["agent"] for r in results] == [1, 2, 3]
    assert results[0] == {"agent": 1, "success": True, "result": "A is 1"}
    assert results[1] == {"agent": 2, "success": True, "result": "B is 2"}
    assert "sub-agents cannot spawn sub-agents" in results[2]["result"]
    refused = next(m for m in history if m.name == SUBMIT_RESULT_TOOL)
    assert refused.is_error and "only sub-agents" in refused.text
    assert answer.startswith("Summary: ")

    for call in provider.calls:
        names = tool_names(call.options)
        is_child = call.messages[1].text.startswith("find")
        assert names >= ({SUBMIT_RESULT_TOOL} if is_child else {SPAWN_AGENTS_TOOL})
        assert not names >= {SUBMIT_RESULT_TOOL, SPAWN_AGENTS_TOOL}
        if is_child:
            assert SPAWN_AGENTS_TOOL not in names, "no nested spawning"
    for child in children:
        child_history = await core.history(child.id)
        assert history_problems(child_history) == []
        assert (await core.status(child.id)).state == "idle"


async def test_cancelling_the_parent_cancels_the_children(make_core: Callable[..., Any]) -> None:
    def rule(messages: list[Message], options: CompletionOptions) -> Rule:
        if SPAWN_AGENTS_TOOL in tool_names(options):
            return CallTool(SPAWN_AGENTS_TOOL, {"tasks": ["work slowly", "work slowly too"]})
        return Hang()

    provider = ScriptedProvider([rule], repeat_last=True)
    core: Core = make_core(provider, virtual=False)
    await core.start(maintenance=False)
    handle = await core.send(ADDR, "delegate")
    parent = handle.session_id
    await until(lambda: len(provider.calls) == 3)  # the parent's call and both children's
    children = [r.id for r in await children_of(core, parent, 2)]
    assert await core.cancel(parent) == 0
    assert isinstance(await handle.result(), Cancelled)
    history = await core.history(parent)
    assert history_problems(history) == []
    assert history[-1].name == SPAWN_AGENTS_TOOL and history[-1].text == "Cancelled by user"
    for child in children:
        await core.wait_idle(child)
        status = await core.status(child)
        assert status.state == "idle", status
        child_history = await core.history(child)
        assert history_problems(child_history) == []
        assert [m.role for m in child_history] == [Role.USER], "the child's LLM call stopped"
