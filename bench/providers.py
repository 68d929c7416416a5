"""Provider HTTP client benchmark: 1 and 50 concurrent SSE streams against a local fake.

The fake OpenAI-compatible server (``beamclaw_core.testing.FakeOpenAIServer``) runs in a
child process so it does not share the client's event loop or GIL. For each HTTP transport
(``httpx``: httpx's client and pool; ``aiohttp``: aiohttp's client and pool) and each
concurrency level, a real ``OpenAIProvider`` streams complete
replies (``EVENTS`` SSE events each) through ``stream()`` + ``StreamAssembler``.

Reported per (transport, concurrency): streams/s, median and p95 stream latency, median
time to first chunk — each the median over ``ROUNDS`` rounds, transports interleaved
within a round so background load affects both alike — plus ratios: aiohttp vs
httpx at the same concurrency, and 50-way vs 1-way throughput per transport (how well the
pool scales). Peak RSS of this process is reported in MiB.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from typing import Any

from beamclaw_core.messages import Message
from beamclaw_core.providers import (
    OpenAIProvider,
    ProviderSettings,
    StreamAssembler,
    TextDelta,
)
from bench.common import max_rss_mb, percentile

ROUNDS = 7
EVENTS = 40
STREAMS_PER_ROUND = {1: 20, 50: 200}
TRANSPORTS = ("httpx", "aiohttp")

_SERVER = f"""
import asyncio, sys
from beamclaw_core.testing import FakeOpenAIServer, FakeReply

async def main():
    reply = FakeReply("x" * {EVENTS * 4}, chunk_size=4)
    async with FakeOpenAIServer([reply], repeat_last=True, keep_requests=0) as server:
        print(server.base_url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


async def _one(provider: OpenAIProvider) -> tuple[float, float]:
    start = time.perf_counter()
    first = 0.0
    acc = StreamAssembler()
    async for chunk in provider.stream([Message.user("bench")]):
        if not first and isinstance(chunk, TextDelta):
            first = time.perf_counter() - start
        acc.feed(chunk)
    acc.completion()
    return time.perf_counter() - start, first


async def _round(provider: OpenAIProvider, concurrency: int) -> dict[str, float]:
    total = STREAMS_PER_ROUND[concurrency]
    sem = asyncio.Semaphore(concurrency)

    async def guarded() -> tuple[float, float]:
        async with sem:
            return await _one(provider)

    start = time.perf_counter()
    results = await asyncio.gather(*(guarded() for _ in range(total)))
    wall = time.perf_counter() - start
    latencies = sorted(r[0] for r in results)
    return {
        "streams_per_s": total / wall,
        "latency_median_ms": statistics.median(latencies) * 1000,
        "latency_p95_ms": percentile(latencies, 95) * 1000,
        "first_chunk_median_ms": statistics.median(r[1] for r in results) * 1000,
    }


async def _measure(base_url: str) -> dict[str, Any]:
    providers = {
        transport: OpenAIProvider(
            "bench",
            ProviderSettings(
                base_url=base_url,
                model="bench",
                http_transport=transport,
                max_connections=100,
                max_keepalive_connections=100,
            ),
        )
        for transport in TRANSPORTS
    }
    samples: dict[str, list[dict[str, float]]] = {}
    try:
        for provider in providers.values():
            await _round(provider, 1)  # warm-up: connections, imports
        # interleave transports within each round so machine load hits both equally
        for _ in range(ROUNDS):
            for concurrency in (1, 50):
                for transport, provider in providers.items():
                    key = f"{transport}_c{concurrency}"
                    samples.setdefault(key, []).append(await _round(provider, concurrency))
    finally:
        for provider in providers.values():
            await provider.close()
    return {
        label: {k: round(statistics.median(r[k] for r in rounds), 2) for k in rounds[0]}
        for label, rounds in samples.items()
    }


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements and ratios (prints nothing)."""
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        results = asyncio.run(_measure(base_url))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    ratios = {
        "aiohttp_vs_httpx_throughput_c1": round(
            results["aiohttp_c1"]["streams_per_s"] / results["httpx_c1"]["streams_per_s"], 2
        ),
        "aiohttp_vs_httpx_throughput_c50": round(
            results["aiohttp_c50"]["streams_per_s"] / results["httpx_c50"]["streams_per_s"], 2
        ),
        "httpx_scaling_c50_vs_c1": round(
            results["httpx_c50"]["streams_per_s"] / results["httpx_c1"]["streams_per_s"], 2
        ),
        "aiohttp_scaling_c50_vs_c1": round(
            results["aiohttp_c50"]["streams_per_s"] / results["aiohttp_c1"]["streams_per_s"], 2
        ),
    }
    peak_mib = max_rss_mb()
    flat: dict[str, Any] = {"events_per_stream": EVENTS, "rounds": ROUNDS}
    for label, values in results.items():
        for key, value in values.items():
            flat[f"{label}_{key}"] = value
    flat.update(ratios)
    flat["peak_rss_mib"] = round(peak_mib, 1)
    return flat
