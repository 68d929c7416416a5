"""Memory and descriptors of a served gateway: at rest, per session, per WebSocket.

``beamclaw serve`` runs in its own process (``_served``) against the 20 ms fake upstream,
with idle lanes kept (``lane_idle_seconds`` 600 s: the worst case, every session's lane
still in memory). Its RSS (``/proc/<pid>/status``), open descriptors (``/proc/<pid>/fd``)
and live asyncio tasks (``/metrics``) are read:

* ``idle_rss_mb``: once ready and settled, before any turn;
* ``rss_mb_per_1k_sessions``: RSS added by 1,000 sessions of one turn each (10 clients),
  after ``WARM_UP`` sessions, once their background work has finished; median over ``ROUNDS`` batches (each a new
  1,000, so the later ones show whether growth continues), ``_rounds`` the spread;
* ``rss_mb_per_1k_idle_sessions``: the same (after its own warm-up) on a second gateway
  whose lanes leave memory after ``IDLE_LANE_SECONDS`` and whose heap is trimmed every
  second (every lane does after ``[core.maintenance] lane_idle_seconds``, 300 s by
  default, and the heap is trimmed every ``[gateway] heap_trim_seconds``, 60 s: the
  same timeline, shortened), measured once both have happened: what a session that is
  over costs the process (its indexed transcript, caches), issue 18's goal;
* ``rss_mb_per_1k_websockets``: RSS added while 1,000 ``/ws`` connections are open and
  authenticated (idle), median over ``ROUNDS`` opens; ``fds_with_1k_websockets`` and
  ``tasks_with_1k_websockets`` at that moment;
* ``fds_*``/``tasks_*`` at rest, before the WebSockets (each kept session lane holds a
  task), and after the last WebSockets closed (the goal: back to the figures before).

Goals: at most 100 MB per 1,000 sessions with their lanes kept and per 1,000 WebSockets
(issue 24), at most 5 MB per 1,000 sessions whose lanes have left memory (issue 18).
``BENCH_QUICK=1``: 200 of each, once (scaled to per 1,000).
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
from typing import Any

from bench._drive import QUICK, batch, client, fresh_session, settle_tasks
from bench._served import Served, fake_upstream, served_gateway

PER = 1000 if not QUICK else 200
ROUNDS = 3 if not QUICK else 1
GW_BODY = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "bench"}]}


async def _settled_rss(gw: Served) -> float:
    await settle_tasks(gw.tasks)
    await asyncio.sleep(0.5)
    return gw.rss_mb()


async def _measure(gw: Served) -> dict[str, Any]:
    out: dict[str, Any] = {}
    url = f"{gw.base_url}/v1/chat/completions"
    scale = 1000 / PER
    await asyncio.sleep(1.0)
    out["idle_rss_mb"] = round(await _settled_rss(gw), 1)
    out["fds_at_rest"] = await settle_tasks(gw.fds)
    out["tasks_at_rest"] = await settle_tasks(gw.tasks)
    sessions: list[float] = []
    async with client() as http:
        await batch(http, url, GW_BODY, WARM_UP, 10, fresh_session)
        rss_by_sessions = [out["idle_rss_mb"], round(await _settled_rss(gw), 1)]
        for _ in range(ROUNDS):
            before = await _settled_rss(gw)
            got = await batch(http, url, GW_BODY, PER, 10, fresh_session)
            if got.errors:
                raise RuntimeError(f"{got.errors} of {PER} turns failed")
            after = await _settled_rss(gw)
            sessions.append((after - before) * scale)
            rss_by_sessions.append(round(after, 1))
    websockets: list[float] = []
    rss_by_ws = [rss_by_sessions[-1]]
    out["fds_before_websockets"] = await settle_tasks(gw.fds)
    out["tasks_before_websockets"] = await settle_tasks(gw.tasks)
    async with client() as http:
        for _ in range(ROUNDS):
            before = await _settled_rss(gw)
            sockets = [await http.ws_connect(gw.ws_url) for _ in range(PER)]
            for ws in sockets:
                await ws.receive_str()  # authenticated
            gc.collect()
            after = await _settled_rss(gw)
            websockets.append((after - before) * scale)
            rss_by_ws.append(round(after, 1))
            out["fds_with_1k_websockets"] = gw.fds()
            out["tasks_with_1k_websockets"] = gw.tasks()
            await asyncio.gather(*(ws.close() for ws in sockets))
    await asyncio.sleep(1.0)
    out["fds_after_websockets_closed"] = await settle_tasks(gw.fds)
    out["tasks_after_websockets_closed"] = await settle_tasks(gw.tasks)
    out["rss_mb_per_1k_sessions"] = round(statistics.median(sessions), 2)
    out["rss_mb_per_1k_sessions_rounds"] = f"{min(sessions):.1f}..{max(sessions):.1f}"
    out["rss_mb_per_1k_websockets"] = round(statistics.median(websockets), 2)
    out["rss_mb_per_1k_websockets_rounds"] = f"{min(websockets):.1f}..{max(websockets):.1f}"
    out["series_sessions"] = [0, *(WARM_UP + PER * i for i in range(ROUNDS + 1))]
    out["series_rss_mb_by_sessions"] = rss_by_sessions
    out["series_rss_mb_by_websockets"] = rss_by_ws
    return out


WARM_UP = 200
"""Sessions driven before the first measured batch of each gateway: first-use growth (the
memory index's first build, lazily imported modules, allocator arenas) is not a
per-session cost."""
IDLE_LANE_SECONDS = 1.0
"""Lane idle time of the second gateway (its maintenance checks every second)."""


async def _idle_sessions(gw: Served) -> dict[str, Any]:
    """RSS added per 1,000 sessions once their lanes have left memory."""
    url = f"{gw.base_url}/v1/chat/completions"
    await asyncio.sleep(1.0)
    added: list[float] = []
    async with client() as http:
        await batch(http, url, GW_BODY, WARM_UP, 10, fresh_session)
        for _ in range(ROUNDS):
            before = await _settled_rss(gw)
            got = await batch(http, url, GW_BODY, PER, 10, fresh_session)
            if got.errors:
                raise RuntimeError(f"{got.errors} of {PER} turns failed")
            await asyncio.sleep(IDLE_LANE_SECONDS + 2.5)  # evicted by the next checks
            added.append((await _settled_rss(gw) - before) * 1000 / PER)
    return {
        "rss_mb_per_1k_idle_sessions": round(statistics.median(added), 2),
        "rss_mb_per_1k_idle_sessions_rounds": f"{min(added):.1f}..{max(added):.1f}",
    }


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements (prints nothing)."""
    with fake_upstream() as upstream:
        with served_gateway(upstream, lane_idle=600) as gw:
            out = asyncio.run(_measure(gw))
            out["cold_start_to_ready_s"] = round(gw.ready_seconds, 2)
        with served_gateway(upstream, lane_idle=IDLE_LANE_SECONDS, heap_trim=1.0) as gw:
            out.update(asyncio.run(_idle_sessions(gw)))
    out.update(
        per=PER,
        rounds=ROUNDS,
        goal_mb_per_1k=100.0,
        goal_mb_per_1k_idle=5.0,
        load_average_1m=round(os.getloadavg()[0], 2),
    )
    return out
