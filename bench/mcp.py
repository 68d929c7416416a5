"""Cost of an MCP tool call through BeamClaw's layers vs the raw SDK session.

Both sides talk to the same kind of server — ``mcp-server-time`` over stdio — and call
``get_current_time`` sequentially. Baseline: a bare ``mcp.ClientSession`` (no pump, no
supervision, no conversion). Measured: ``ToolRegistry.execute`` → ``MCPTool`` → grants →
``ServerConnection.call_tool`` → SDK → result conversion (scrub, cap, structured) →
registry scrub/cap. Medians over rounds of several calls each; the ratio is ours / raw.
Also reported: how long ``MCPManager.start()`` blocks (it must not wait for servers) and
time from start to the server being up.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from beamclaw_mcp import MCPManager, MCPSettings
from beamclaw_tools import SessionRef, ToolCall, ToolRegistry
from bench.common import max_rss_mb, median, traced_peak

ROUNDS = 7
CALLS_PER_ROUND = 40
ARGS = {"timezone": "Etc/UTC"}


def _server_command() -> str:
    local = Path(sys.executable).parent / "mcp-server-time"
    return str(local) if local.exists() else (shutil.which("mcp-server-time") or "mcp-server-time")


async def _raw_rounds() -> list[float]:
    params = StdioServerParameters(command=_server_command())
    out: list[float] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        await session.call_tool("get_current_time", ARGS)  # warm-up
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for _ in range(CALLS_PER_ROUND):
                await session.call_tool("get_current_time", ARGS)
            out.append((time.perf_counter() - start) / CALLS_PER_ROUND)
    return out


async def _beamclaw_rounds(rounds: int = ROUNDS) -> tuple[list[float], float, float]:
    settings = MCPSettings.model_validate(
        {"servers": [{"name": "time", "command": _server_command()}]}
    )
    registry = ToolRegistry()
    manager = MCPManager(settings, sink=registry)
    t0 = time.perf_counter()
    manager.start()
    start_blocked = time.perf_counter() - t0
    await manager.wait_up("time", 60)
    time_to_up = time.perf_counter() - t0
    session = SessionRef(session_id="bench", agent_id="default")
    call = ToolCall(id="c", name="get_current_time", args=ARGS)
    out: list[float] = []
    try:
        await registry.execute(call, session)  # warm-up
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(CALLS_PER_ROUND):
                result = await registry.execute(call, session)
                if result.is_error:
                    raise RuntimeError(result.content)
            out.append((time.perf_counter() - start) / CALLS_PER_ROUND)
    finally:
        await manager.stop()
    return out, start_blocked, time_to_up


async def run() -> dict[str, float | int | str]:
    raw = await _raw_rounds()
    ours, start_blocked, time_to_up = await _beamclaw_rounds()
    with traced_peak() as peak:  # a separate pass: tracemalloc slows everything it traces
        await _beamclaw_rounds(rounds=1)
    raw_ms = median(raw) * 1000
    ours_ms = median(ours) * 1000
    return {
        "server": "mcp-server-time (stdio)",
        "calls_per_round": CALLS_PER_ROUND,
        "rounds": ROUNDS,
        "raw_sdk_call_ms_median": round(raw_ms, 3),
        "beamclaw_call_ms_median": round(ours_ms, 3),
        "ratio_beamclaw_vs_raw": round(ours_ms / raw_ms, 3),
        "overhead_ms_per_call": round(ours_ms - raw_ms, 3),
        "start_blocks_ms": round(start_blocked * 1000, 3),
        "start_to_up_ms": round(time_to_up * 1000, 1),
        "peak_traced_mb_one_round": round(peak() / 1e6, 2),
        "max_rss_mb": round(max_rss_mb(), 1),
    }
