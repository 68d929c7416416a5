"""Many concurrent streams: are all chunks delivered, and does none stall?

The fake upstream (``_served``, its own process) streams ``STREAM_TOKENS`` word tokens
``STREAM_GAP_SECONDS`` apart (40 tokens at 40 tokens/s: a 1 s answer, as a chat model
writes); ``beamclaw serve`` runs in another process. Each round starts ``STREAMS``
streams at once three ways, alternating the order between rounds:

* ``direct``: straight from the upstream (the baseline, same run, same concurrency);
* ``sse``: ``POST /v1/chat/completions`` with ``stream: true``, a fresh session each;
* ``ws``: ``STREAMS`` ``/ws`` connections opened first, then one turn on each at once.

Reported per path, medians over ``ROUNDS`` rounds:

* ``<path>_complete``: streams whose text arrived whole and ended normally;
  ``<path>_dropped``: the rest (the goal: 0 at ``STREAMS`` >= 200);
* ``<path>_stalled``: streams with a gap over ``STALL_MS`` between two content chunks
  (goal 0); ``<path>_max_gap_p99_ms``: the 99th percentile of each stream's longest gap;
* ``<path>_ttft_p50_ms``/``p99`` and ``<path>_added_ttft_p50_ms``/``p99`` (minus the
  direct streams' at the same percentile, in the same round), ``_rounds_ms`` the lowest
  and highest round's added p50;
* ``<path>_gap_p50_ms``/``p99``: every inter-chunk gap of every stream.

``samples_ttft_ms_<path>``: each stream's time to first token in the last round (the
distribution plotted in ``docs/bench/ttft.png``). ``BENCH_QUICK=1`` runs 50 streams once.
"""

from __future__ import annotations

import asyncio
import os
import statistics
from typing import Any

import aiohttp

from bench._drive import JSON, QUICK, Stream, client, fresh_session, sse, ws_turn
from bench._served import (
    STREAM_GAP_SECONDS,
    STREAM_TOKENS,
    Served,
    fake_upstream,
    served_gateway,
)
from bench.common import percentile
from bench.streaming import tokens

STREAMS = 200 if not QUICK else 50
ROUNDS = 2 if not QUICK else 1
STALL_MS = 200.0
PROMPT = "bench-stream"
EXPECTED = "".join(tokens(STREAM_TOKENS))


def judge(path: str, streams: list[Stream]) -> dict[str, float]:
    """The figures of one path in one round (see the module docstring)."""
    complete = sum(s.ok and s.text == EXPECTED for s in streams)
    ttfts = [s.ttft for s in streams if s.times] or [float("nan")]
    gaps = [g for s in streams for g in s.gaps()] or [0.0]
    return {
        f"{path}_complete": complete,
        f"{path}_dropped": len(streams) - complete,
        f"{path}_stalled": sum(s.max_gap * 1000 > STALL_MS for s in streams),
        f"{path}_max_gap_p99_ms": percentile([s.max_gap for s in streams], 99) * 1000,
        f"{path}_ttft_p50_ms": percentile(ttfts, 50) * 1000,
        f"{path}_ttft_p99_ms": percentile(ttfts, 99) * 1000,
        f"{path}_gap_p50_ms": percentile(gaps, 50) * 1000,
        f"{path}_gap_p99_ms": percentile(gaps, 99) * 1000,
    }


async def _ws_all(http: aiohttp.ClientSession, url: str) -> list[Stream]:
    sockets = [await http.ws_connect(url) for _ in range(STREAMS)]
    try:
        for ws in sockets:
            await ws.receive_str()  # authenticated
        return list(await asyncio.gather(*(ws_turn(ws, PROMPT) for ws in sockets)))
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets))


async def _measure(upstream: str, gw: Served) -> dict[str, Any]:
    messages = [{"role": "user", "content": PROMPT}]
    direct_body = {"model": "fake-model", "messages": messages}
    gw_body = {"model": "beamclaw/default", "messages": messages}
    gw_url = f"{gw.base_url}/v1/chat/completions"
    rounds: dict[str, list[float]] = {}
    samples: dict[str, list[float]] = {}
    async with client() as http:
        await asyncio.gather(*(sse(http, gw_url, gw_body, fresh_session()) for _ in range(10)))

        async def direct() -> list[Stream]:
            return list(
                await asyncio.gather(
                    *(
                        sse(http, f"{upstream}/chat/completions", direct_body, JSON)
                        for _ in range(STREAMS)
                    )
                )
            )

        async def via_sse() -> list[Stream]:
            return list(
                await asyncio.gather(
                    *(sse(http, gw_url, gw_body, fresh_session()) for _ in range(STREAMS))
                )
            )

        async def via_ws() -> list[Stream]:
            return await _ws_all(http, gw.ws_url)

        paths = {"direct": direct, "sse": via_sse, "ws": via_ws}
        for r in range(ROUNDS):
            got: dict[str, list[Stream]] = {}
            for name in paths if r % 2 == 0 else reversed(list(paths)):
                got[name] = await paths[name]()
                await asyncio.sleep(1.0)
            base = judge("direct", got["direct"])
            for name, streams in got.items():
                for key, value in judge(name, streams).items():
                    rounds.setdefault(key, []).append(value)
                samples[name] = [round(s.ttft * 1000, 2) for s in streams if s.times]
                if name != "direct":
                    for p in ("p50", "p99"):
                        added = rounds[f"{name}_ttft_{p}_ms"][-1] - base[f"direct_ttft_{p}_ms"]
                        rounds.setdefault(f"{name}_added_ttft_{p}_ms", []).append(added)
    out: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in rounds.items()}
    for name in ("sse", "ws"):
        spread = rounds.get(f"{name}_added_ttft_p50_ms", [])
        if spread:
            out[f"{name}_added_ttft_p50_rounds_ms"] = f"{min(spread):.1f}..{max(spread):.1f}"
    for name, values in samples.items():
        out[f"samples_ttft_ms_{name}"] = values
    return out


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements (prints nothing)."""
    with fake_upstream() as upstream, served_gateway(upstream) as gw:
        out = asyncio.run(_measure(upstream, gw))
        out["rss_mb_at_end"] = round(gw.rss_mb(), 1)
    out.update(
        streams=STREAMS,
        rounds=ROUNDS,
        tokens_per_stream=STREAM_TOKENS,
        upstream_gap_ms=STREAM_GAP_SECONDS * 1000,
        goal_dropped=0,
        goal_stalled=0,
        load_average_1m=round(os.getloadavg()[0], 2),
    )
    return out
