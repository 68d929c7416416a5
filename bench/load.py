"""Throughput and latency under concurrent clients: gateway vs the upstream directly.

A fake OpenAI-compatible upstream answers every request after 20 ms (``_served``, its
own process); ``beamclaw serve`` runs in another process with that upstream as its only
provider; the clients (aiohttp, closed loop: each sends its next request when its answer
is in) run here. For 1, 10 and 50 concurrent clients, each round runs a batch straight
to the upstream (the baseline) and a batch of ``POST /v1/chat/completions`` turns through
the gateway, a fresh session per turn, alternating which goes first; ``ROUNDS`` rounds.
Reported per concurrency ``c<N>_``, each the median over the rounds:

* ``direct_p50_ms``/``p90``/``p99`` and ``gateway_p50_ms``/``p90``/``p99``;
  ``added_p50_ms``/``added_p99_ms`` their difference, ``added_p50_rounds_ms`` the lowest
  and highest round's own difference (the spread);
* ``direct_per_s``/``gateway_per_s``: answers per second, and their ratio;
* ``gateway_error_rate``: failed turns (non-200, reset) / turns (``direct_error_rate``
  the same for the upstream).

Around the whole run, on the gateway process: open file descriptors (``/proc``), live
asyncio tasks (``/metrics``) and RSS, after a warm-up and again after the load once
background work has finished and idle session lanes were evicted (``_served``);
``upstream_keepalive_*`` counts the descriptors among them that are the provider's
keep-alive connections to the upstream (pooled for ``keepalive_expiry``, 30 s), and
``fds_returned`` compares the rest (``*_before``/``*_after``; the goal is that descriptors and
tasks return to their baseline), and ``cold_start_to_ready_s`` of this run's gateway.
``BENCH_QUICK=1`` runs one small round (development only).
"""

from __future__ import annotations

import asyncio
import os
import statistics
from typing import Any

from bench._drive import QUICK, Batch, batch, client, fresh_session, plain, settle_tasks
from bench._served import LANE_IDLE_SECONDS, Served, fake_upstream, served_gateway, sockets_to
from bench.common import percentile

CONCURRENCY = (1, 10, 50)
REQUESTS = {1: 60, 10: 200, 50: 400} if not QUICK else {1: 15, 10: 50, 50: 100}
ROUNDS = 3 if not QUICK else 1
ANSWER_SECONDS = 0.02

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "bench"}]}
GW_BODY = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "bench"}]}


def summarize(prefix: str, b: Batch) -> dict[str, float]:
    """``<prefix>_p50_ms``/``p90``/``p99``, ``_per_s`` and ``_error_rate`` of a batch."""
    lat = b.latencies or [float("nan")]
    return {
        f"{prefix}_p50_ms": percentile(lat, 50) * 1000,
        f"{prefix}_p90_ms": percentile(lat, 90) * 1000,
        f"{prefix}_p99_ms": percentile(lat, 99) * 1000,
        f"{prefix}_per_s": b.per_second,
        f"{prefix}_error_rate": b.error_rate,
    }


def fold(rounds: dict[str, list[float]]) -> dict[str, Any]:
    """Medians over rounds, and the added latency derived from them, per concurrency."""
    out: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in rounds.items()}
    for c in CONCURRENCY:
        k = f"c{c}_"
        if f"{k}gateway_p50_ms" not in out:
            continue
        out[f"{k}added_p50_ms"] = round(out[f"{k}gateway_p50_ms"] - out[f"{k}direct_p50_ms"], 3)
        out[f"{k}added_p99_ms"] = round(out[f"{k}gateway_p99_ms"] - out[f"{k}direct_p99_ms"], 3)
        spread = [
            g - d
            for g, d in zip(rounds[f"{k}gateway_p50_ms"], rounds[f"{k}direct_p50_ms"], strict=True)
        ]
        out[f"{k}added_p50_rounds_ms"] = f"{min(spread):.2f}..{max(spread):.2f}"
        if out[f"{k}direct_per_s"]:
            out[f"{k}gateway_vs_direct_per_s"] = round(
                out[f"{k}gateway_per_s"] / out[f"{k}direct_per_s"], 3
            )
    return out


async def _census(gw: Served, upstream: str) -> tuple[int, int, int, float]:
    """Descriptors, upstream keep-alive connections among them, tasks, RSS (MB)."""
    await asyncio.sleep(LANE_IDLE_SECONDS + 2)  # idle lanes evicted
    tasks = await settle_tasks(gw.tasks)
    fds = await settle_tasks(gw.fds)
    pool = sockets_to(gw.pid, int(upstream.rsplit(":", 1)[1].split("/")[0]))
    return fds, pool, tasks, gw.rss_mb()


async def _measure(upstream: str, gw: Served) -> dict[str, Any]:
    direct_url = f"{upstream}/chat/completions"
    gw_url = f"{gw.base_url}/v1/chat/completions"
    rounds: dict[str, list[float]] = {}
    async with client() as http:
        await batch(http, gw_url, GW_BODY, 50, 10, fresh_session)  # warm-up
        await batch(http, direct_url, BODY, 50, 10)
    fds0, pool0, tasks0, rss0 = await _census(gw, upstream)
    async with client() as http:
        for r in range(ROUNDS):
            for c in CONCURRENCY:
                n = REQUESTS[c]
                sides = [
                    ("direct", direct_url, BODY, plain),
                    ("gateway", gw_url, GW_BODY, fresh_session),
                ]
                for side, url, body, headers in sides if r % 2 == 0 else sides[::-1]:
                    got = await batch(http, url, body, n, c, headers)
                    for key, value in summarize(f"c{c}_{side}", got).items():
                        rounds.setdefault(key, []).append(value)
    fds1, pool1, tasks1, rss1 = await _census(gw, upstream)
    out = fold(rounds)
    out.update(
        fds_before=fds0,
        fds_after=fds1,
        upstream_keepalive_before=pool0,
        upstream_keepalive_after=pool1,
        tasks_before=tasks0,
        tasks_after=tasks1,
        rss_mb_before=round(rss0, 1),
        rss_mb_after=round(rss1, 1),
        fds_returned=fds1 - pool1 <= fds0 - pool0,
        tasks_returned=tasks1 <= tasks0,
    )
    return out


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements (prints nothing)."""
    with fake_upstream(ANSWER_SECONDS) as upstream, served_gateway(upstream) as gw:
        out = asyncio.run(_measure(upstream, gw))
        out["cold_start_to_ready_s"] = round(gw.ready_seconds, 2)
    out["upstream_answer_ms"] = ANSWER_SECONDS * 1000
    out["rounds"] = ROUNDS
    out["requests_per_batch"] = ", ".join(f"c{c}: {n}" for c, n in REQUESTS.items())
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    return out
