"""Agentic-loop overhead per step (scripted provider, no-op tool, SQLite).

* ``machine_us_per_transition``: the pure ``transition`` alone.
* ``baseline_ms_per_step``: what a step costs without the loop — one scripted streamed
  LLM call plus one registry tool execution, called directly.
* ``loop_ms_per_step``: a full turn through ``Core`` (persistence, events, scrubbing)
  divided by its steps; ``overhead_ratio`` = loop / baseline.
* ``append_ms_early`` / ``append_ms_late``: per-step cost in the first turns and after a
  few hundred stored messages (appends must not grow with history).

Medians over several rounds; peak memory of one full turn.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop import LoopContext, transition
from beamclaw_core.loop import inputs as ev
from beamclaw_core.loop.states import LlmRequesting, ToolExecuting, Turn
from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_memory import Database
from beamclaw_tools import SessionRef, ToolCall, ToolDef, ToolOutput, ToolRegistry, ToolResult
from bench.common import median, traced_peak

STEPS = 8
ROUNDS = 5


class NoOp:
    definition = ToolDef(name="noop", description="does nothing")

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        return ToolOutput.ok("ok")


def _script() -> list[Any]:
    return [*(CallTool("noop", {"i": i}) for i in range(STEPS)), Reply("finished")]


def _machine_us() -> float:
    ctx = LoopContext(conversation_id="bench")
    turn = Turn(turn_id="t", started_at=0)
    call = ToolCall(id="c1", name="noop")
    response = ev.LlmResponse(Message.assistant("", tool_calls=(call,)), Usage(), "m")
    complete = ev.ToolComplete(ToolResult(tool_call_id="c1", name="noop", content="ok"))
    requesting = LlmRequesting(turn=turn)
    executing = ToolExecuting(turn=turn, current=call)
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        transition(requesting, ctx, response)
        transition(executing, ctx, complete)
    return (time.perf_counter() - start) / (2 * n) * 1e6


async def _baseline_ms() -> float:
    provider = ScriptedProvider(_script())
    registry = ToolRegistry()
    registry.register(NoOp())
    session = SessionRef(session_id="s", agent_id="default")
    messages = [Message.user("go")]
    start = time.perf_counter()
    for i in range(STEPS + 1):
        async for _chunk in provider.stream(messages, CompletionOptions()):
            pass
        if i < STEPS:
            await registry.execute(ToolCall(id=f"c{i}", name="noop", args={"i": i}), session)
    return (time.perf_counter() - start) / STEPS * 1000


async def _loop_ms(core: Core, address: SessionAddress, provider: ScriptedProvider) -> float:
    provider.add(*_script())
    start = time.perf_counter()
    handle = await core.send(address, "go")
    await handle.text()
    return (time.perf_counter() - start) / STEPS * 1000


async def run() -> dict[str, Any]:
    machine = median([_machine_us() for _ in range(ROUNDS)])
    baseline = median([await _baseline_ms() for _ in range(ROUNDS)])
    with tempfile.TemporaryDirectory() as tmp:
        settings = CoreSettings.model_validate(
            {
                "queue": {"debounce_ms": 0},
                "reset": {"daily_hour": None},
                "agentic_loop": {"max_tool_iterations": STEPS + 1, "compaction_threshold_pct": 100},
            }
        )
        db = Database(f"sqlite:///{Path(tmp) / 'bench.db'}")
        provider = ScriptedProvider([])
        registry = ToolRegistry()
        registry.register(NoOp())
        core = Core.create(settings, db, provider=provider, tools=registry, system_prompt="bench")
        await core.start(maintenance=False)
        address = SessionAddress("local:bench", "default")
        try:
            early = [await _loop_ms(core, address, provider) for _ in range(ROUNDS)]
            for _ in range(20):  # grow the history by a few hundred messages
                await _loop_ms(core, address, provider)
            late = [await _loop_ms(core, address, provider) for _ in range(ROUNDS)]
            with traced_peak() as peak:
                await _loop_ms(core, address, provider)
            stored = len(await core.history(core.session_id(address)))
        finally:
            await core.stop()
            await db.dispose()
    loop_ms = median(early)
    return {
        "machine_us_per_transition": round(machine, 2),
        "baseline_ms_per_step": round(baseline, 3),
        "loop_ms_per_step": round(loop_ms, 3),
        "overhead_ratio": round(loop_ms / baseline, 1) if baseline else None,
        "append_ms_early": round(loop_ms, 3),
        "append_ms_late": round(median(late), 3),
        "late_vs_early": round(median(late) / loop_ms, 2),
        "messages_stored": stored,
        "peak_kb_one_turn": round(peak() / 1024, 1),
    }
