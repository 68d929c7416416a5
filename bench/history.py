"""Per-turn cost against history length: one session driven for ``TURNS`` turns.

Each turn is a non-streaming ``POST /v1/chat/completions`` with the same ``X-Session-Id``
through a real gateway (uvicorn on 127.0.0.1, the OpenAI provider pointed at the fake
server of ``bench.gateway``, in a child process), so the request the gateway sends
upstream grows by two messages a turn (~2,000 messages at the end). After each turn the
exact body that turn sent upstream is replayed directly to the fake server (the
baseline, in the same run, the same bytes): ``added`` is gateway turn minus direct
replay, i.e. what BeamClaw itself costs on top of the upstream request at that length.
Background work a turn leaves (transcript indexing) is flushed between the two, outside
both timings. Turns start once the agent's workspace files are older than the prompt's
file cache trusts (``RACY_WINDOW_NS``, 2 s): before that, every turn re-reads them in a
worker thread, a start-up cost that would be charged to the early window only.

A control runs interleaved with it: beside each measured turn (before it or after it, in
turn), a turn of a short session (a new one every ``CONTROL_TURNS`` turns, so at most
``2 * CONTROL_TURNS`` messages) and the direct replay of its body, timed the same way. It sees the same machine load and the
same process state as the long session at the same moment, so the long session's added
CPU time over the control's (``added_cpu_late_vs_control``) isolates what the history's
length costs, which ``late_vs_early`` mixes with load changes over the run.

Beside each measured turn, the parts no implementation that keeps the same promises can
drop are timed on their own, on the gateway's own store and memory (warm, outside any
turn, so each is a lower bound of what it costs inside one): ``parts_commits`` — the two
write transactions every turn commits (the user message before the model is asked, the
answer after), each one message and the conversation's state, in a conversation of their
own; ``parts_lookup`` — the auto-context search each turn makes (``[memory]
auto_context``, on by default) for the bench's message, the long session's own chunks
left out as its view leaves them out. ``floor_plus_parts_p50_*_ms`` adds the framework
floor to both: the least a turn can add here before any request is built, any event
published or any lane scheduled.

Reported: ``added_p50_early_ms`` (turns 20-120), ``added_p50_late_ms`` (turns
``TURNS``-100..``TURNS``), ``late_vs_early`` (their ratio; the goal is <= 1.2), the same
for the gateway turn and the direct replay alone, the same comparison in this process's
CPU time (``added_cpu_*``: steadier than wall-clock time when other work shares the
cores), the control's added CPU time in both windows and the late ratio against it, and
the upstream body size at the end, and the parts above.
Opt-in (``python -m bench history``): it drives 1,000 turns.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench._floor import served_floor
from bench.common import fake_upstream_process, max_rss_mb
from bench.gateway import _SERVER, BODY, GW_BODY, _client, _post, bench_config

TURNS = 1_000
EARLY = (20, 120)
"""Turn numbers (1-based, inclusive) of the early window."""
LATE = (TURNS - 100, TURNS)
SESSION = "bench-history"
CONTROL_TURNS = 50
"""Turns per control session (then the control starts a new one)."""


async def _replay(client: Any, url: str, body: bytes) -> float:
    start = time.perf_counter()
    async with client.post(url, data=body, headers={"content-type": "application/json"}) as r:
        await r.read()
    elapsed = time.perf_counter() - start
    r.raise_for_status()
    return elapsed


async def _measure(fake_url: str, last_request: Callable[[], bytes]) -> dict[str, Any]:
    from beamclaw_core.workspace.file_cache import RACY_WINDOW_NS
    from beamclaw_gateway.testing import live_gateway

    direct_url = f"{fake_url}/chat/completions"
    via: list[float] = []
    direct: list[float] = []
    via_cpu: list[float] = []
    direct_cpu: list[float] = []
    control_cpu: list[float] = []
    floor_added: list[float] = []
    commits: list[float] = []
    lookups: list[float] = []
    size = 0
    async with (
        live_gateway(None, bench_config(fake_url)) as gw,
        _client() as client,
        served_floor(fake_url) as floor_url,
    ):
        gw_url = f"{gw.base_url}/v1/chat/completions"
        core = gw.runtime.core
        parts = _Parts(core, gw.runtime.config.memory.auto_context_limit)

        async def turn_and_replay(session: str) -> tuple[float, float, float, float, int]:
            """Wall and CPU time of a turn, then of the direct replay of its body."""
            cpu = time.process_time()
            wall = await _post(client, gw_url, GW_BODY, session)
            turn_cpu = time.process_time() - cpu
            await core.flush_indexing()
            body = await asyncio.to_thread(last_request)
            cpu = time.process_time()
            replay = await _replay(client, direct_url, body)
            return wall, turn_cpu, replay, time.process_time() - cpu, len(body)

        await _post(client, gw_url, GW_BODY, "bench-history-warm-up")  # writes the workspace
        await asyncio.sleep(RACY_WINDOW_NS / 1e9 + 0.2)
        for turn in range(TURNS):
            control = f"bench-history-control-{turn // CONTROL_TURNS}"
            # alternate which goes first, so neither always follows the other's replay
            order = (SESSION, control) if turn % 2 == 0 else (control, SESSION)
            timed = {session: await turn_and_replay(session) for session in order}
            wall, cpu, replay, replay_cpu, size = timed[SESSION]
            _, c_cpu, _, c_replay_cpu, _ = timed[control]
            via.append(wall)
            via_cpu.append(cpu)
            direct.append(replay)
            direct_cpu.append(replay_cpu)
            control_cpu.append(c_cpu - c_replay_cpu)
            floor = await _post(client, floor_url, GW_BODY, None)
            floor_added.append(floor - await _post(client, direct_url, BODY, None))
            commits.append(await parts.commits())
            lookups.append(await parts.lookup())

    def p50(values: list[float], window: tuple[int, int]) -> float:
        return statistics.median(values[window[0] - 1 : window[1]]) * 1000

    added = [v - d for v, d in zip(via, direct, strict=True)]
    early, late = p50(added, EARLY), p50(added, LATE)
    added_cpu = [v - d for v, d in zip(via_cpu, direct_cpu, strict=True)]
    cpu_early, cpu_late = p50(added_cpu, EARLY), p50(added_cpu, LATE)
    control_early, control_late = p50(control_cpu, EARLY), p50(control_cpu, LATE)
    floor_early, floor_late = p50(floor_added, EARLY), p50(floor_added, LATE)
    return {
        "turns": TURNS,
        "added_p50_early_ms": round(early, 3),
        "added_p50_late_ms": round(late, 3),
        "late_vs_early": round(late / early, 2) if early > 0 else float("nan"),
        "added_cpu_p50_early_ms": round(cpu_early, 3),
        "added_cpu_p50_late_ms": round(cpu_late, 3),
        "cpu_late_vs_early": round(cpu_late / cpu_early, 2) if cpu_early > 0 else float("nan"),
        "control_added_cpu_p50_early_ms": round(control_early, 3),
        "control_added_cpu_p50_late_ms": round(control_late, 3),
        "added_cpu_late_vs_control": (
            round(cpu_late / control_late, 2) if control_late > 0 else float("nan")
        ),
        "parts_commits_p50_early_ms": round(p50(commits, EARLY), 3),
        "parts_commits_p50_late_ms": round(p50(commits, LATE), 3),
        "parts_lookup_p50_early_ms": round(p50(lookups, EARLY), 3),
        "parts_lookup_p50_late_ms": round(p50(lookups, LATE), 3),
        "floor_plus_parts_p50_early_ms": round(
            floor_early + p50(commits, EARLY) + p50(lookups, EARLY), 3
        ),
        "floor_plus_parts_p50_late_ms": round(
            floor_late + p50(commits, LATE) + p50(lookups, LATE), 3
        ),
        "floor_added_p50_early_ms": round(floor_early, 3),
        "floor_added_p50_late_ms": round(floor_late, 3),
        "added_beyond_floor_p50_early_ms": round(early - floor_early, 3),
        "added_beyond_floor_p50_late_ms": round(late - floor_late, 3),
        "gateway_p50_early_ms": round(p50(via, EARLY), 3),
        "gateway_p50_late_ms": round(p50(via, LATE), 3),
        "direct_p50_early_ms": round(p50(direct, EARLY), 3),
        "direct_p50_late_ms": round(p50(direct, LATE), 3),
        "upstream_body_kib_at_end": round(size / 1024, 1),
        "peak_rss_mib": round(max_rss_mb(), 1),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "goal_late_vs_early": 1.2,
        "goal_added_p50_ms": 2.0,
    }


class _Parts:
    """The parts of a turn timed on their own (see the module): a turn's two commits, in
    a conversation of their own, and its auto-context search."""

    CONVERSATION = "bench-history-parts"

    def __init__(self, core: Any, limit: int) -> None:
        self._core = core
        self._limit = limit
        self._ready = False

    async def commits(self) -> float:
        from beamclaw_core.loop.states import Idle
        from beamclaw_core.messages import Message

        store = self._core.store
        if not self._ready:
            now = time.time()
            await store.ensure(
                self.CONVERSATION, agent_id="default", user_id="bench", channel=None, now=now
            )
            self._ready = True
        start = time.perf_counter()
        await store.commit(self.CONVERSATION, Idle(), [Message.user("bench")], now=time.time())
        await store.commit(
            self.CONVERSATION, Idle(), [Message.assistant("fake answer")], now=time.time()
        )
        return time.perf_counter() - start

    async def lookup(self) -> float:
        from beamclaw_memory import SeenTranscript

        seen = SeenTranscript(SESSION, 0)  # the whole history is in the session's view
        start = time.perf_counter()
        await self._core.memory.search("default", "bench", limit=2 * self._limit, seen=seen)
        return time.perf_counter() - start


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements and ratios (prints nothing)."""
    with fake_upstream_process(_SERVER) as upstream:
        from beamclaw_gateway.server import loop_runner

        name, run_loop = loop_runner("auto")
        return {
            **run_loop(_measure(upstream.base_url, upstream.last_request)),
            "event_loop": name,
        }
