"""Memory and descriptors of a served gateway: at rest, per session, per WebSocket.

``beamclaw serve`` runs in its own process (``_served``) against the 20 ms fake upstream,
with idle lanes kept (``lane_idle_seconds`` 600 s: the worst case, every session's lane
still in memory). Its RSS (``/proc/<pid>/status``), open descriptors (``/proc/<pid>/fd``)
and live asyncio tasks (``/metrics``) are read:

* ``idle_rss_mb``: once ready and settled, before any turn;
* ``rss_mb_per_1k_sessions``: RSS added by 1,000 sessions of one turn each (10 clients),
  once their background work has finished; median over ``ROUNDS`` batches (each a new
  1,000, so the later ones show whether growth continues), ``_rounds`` the spread;
* ``rss_mb_per_1k_websockets``: RSS added while 1,000 ``/ws`` connections are open and
  authenticated (idle), median over ``ROUNDS`` opens; ``fds_with_1k_websockets`` and
  ``tasks_with_1k_websockets`` at that moment;
* ``fds_*``/``tasks_*`` at rest, before the WebSockets (each kept session lane holds a
  task), and after the last WebSockets closed (the goal: back to the figures before).

Goals (issue 24): at most 100 MB per 1,000 idle sessions and per 1,000 WebSockets.
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
    rss_by_sessions = [out["idle_rss_mb"]]
    async with client() as http:
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
    out["series_sessions"] = [PER * i for i in range(ROUNDS + 1)]
    out["series_rss_mb_by_sessions"] = rss_by_sessions
    out["series_rss_mb_by_websockets"] = rss_by_ws
    return out


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements (prints nothing)."""
    with fake_upstream() as upstream, served_gateway(upstream, lane_idle=600) as gw:
        out = asyncio.run(_measure(gw))
        out["cold_start_to_ready_s"] = round(gw.ready_seconds, 2)
    out.update(
        per=PER,
        rounds=ROUNDS,
        goal_mb_per_1k=100.0,
        load_average_1m=round(os.getloadavg()[0], 2),
    )
    return out
