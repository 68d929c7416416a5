"""Throughput and latency of 1, 2 and 3 gateway nodes in cluster mode (docs/scale-out.md).

Three ``beamclaw serve`` nodes (separate processes, each its own ``BEAMCLAW_HOME``) share
one fresh PostgreSQL database and one Redis (the test services: ``make bench`` sources
``.test-services/env``; without ``BEAMCLAW_TEST_POSTGRES_URL``/``BEAMCLAW_TEST_REDIS_URL``
this area fails). They answer from the fake upstream of :mod:`bench.load` (20 ms an
answer). The clients (here, closed loop) send ``POST /v1/chat/completions`` turns, a
fresh session per turn, round robin over the first 1, 2 or 3 nodes (a client-side load
balancer; the nodes out of the rotation stay up, idle); each round also runs a batch
straight to the upstream (the baseline). Reported per node count ``n<N>_``, medians over
the rounds: ``per_s`` (answered turns a second), ``p50_ms``/``p99_ms``, ``added_p50_ms``/
``added_p99_ms`` over the upstream's own, ``error_rate``; and ``n<N>_vs_n1_per_s``.

On a machine with fewer cores than nodes (the bench machine has 2, shared with the client
and the upstream) more nodes cannot add throughput: the figures show what the cluster
costs (leases, the relay, PostgreSQL), not how it scales. ``BENCH_QUICK=1`` runs one
small round.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import uuid
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bench._drive import QUICK, Batch, batch, client, fresh_session
from bench._served import (
    BIN,
    CONFIG,
    HEAP_TRIM_SECONDS,
    LANE_IDLE_SECONDS,
    compile_once,
    fake_upstream,
    free_port,
    stop,
    wait_ready,
)
from bench.load import summarize

NODES = (1, 2, 3)
CONCURRENCY = 20
REQUESTS = 300 if not QUICK else 60
ROUNDS = 2 if not QUICK else 1
ANSWER_SECONDS = 0.02

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "bench"}]}
GW_BODY = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "bench"}]}

CLUSTER = """
[memory]
database_url = "{database_url}"

[cluster]
enabled = true
node_id = "{node_id}"
redis_url = "{redis_url}"
key_prefix = "{prefix}"
"""


def _service(var: str) -> str:
    url = os.environ.get(var)
    if not url:
        raise RuntimeError(f"{var} is not set: the cluster bench needs the test services")
    return url


async def _database(admin: str, sql: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(admin)  # pyright: ignore[reportUnknownMemberType]
    try:
        await conn.execute(sql)  # pyright: ignore[reportUnknownMemberType]
    finally:
        await conn.close()  # pyright: ignore[reportUnknownMemberType]


@contextmanager
def fresh_database() -> Generator[str]:
    """A new PostgreSQL database for this run (dropped after); yields its URL."""
    admin = _service("BEAMCLAW_TEST_POSTGRES_URL")
    name = f"bc_bench_cluster_{uuid.uuid4().hex[:10]}"
    asyncio.run(_database(admin, f'CREATE DATABASE "{name}"'))
    try:
        yield f"{admin.rsplit('/', 1)[0]}/{name}"
    finally:
        asyncio.run(_database(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextmanager
def cluster_nodes(upstream: str, database_url: str, count: int) -> Generator[list[str]]:
    """``count`` nodes started together (they migrate once); yields their base URLs."""
    compile_once()
    redis_url = _service("BEAMCLAW_TEST_REDIS_URL")
    prefix = f"bc-bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        procs: list[subprocess.Popen[bytes]] = []
        urls: list[str] = []
        try:
            for i in range(count):
                home = Path(tmp) / f"n{i + 1}"
                home.mkdir()
                config = CONFIG.format(
                    url=upstream, lane_idle=LANE_IDLE_SECONDS, heap_trim=HEAP_TRIM_SECONDS
                ) + (
                    CLUSTER.format(
                        database_url=database_url,
                        node_id=f"n{i + 1}",
                        redis_url=redis_url,
                        prefix=prefix,
                    )
                )
                (home / "beamclaw.toml").write_text(config)
                port = free_port()
                env = {k: v for k, v in os.environ.items() if not k.startswith("BEAMCLAW_")}
                env.update(
                    BEAMCLAW_HOME=str(home), BEAMCLAW_PORT=str(port), BENCH_FAKE_KEY="sk-bench"
                )
                procs.append(
                    subprocess.Popen(
                        [str(BIN / "beamclaw"), "serve"],
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                urls.append(f"http://127.0.0.1:{port}")
            for proc, url in zip(procs, urls, strict=True):
                wait_ready(f"{url}/ready", proc)
            yield urls
        finally:
            for proc in procs:
                stop(proc)


async def round_robin(http: aiohttp.ClientSession, urls: list[str], total: int) -> Batch:
    """``total`` turns by :data:`CONCURRENCY` closed-loop clients, request ``i`` to
    ``urls[i % len(urls)]``, a fresh session each."""
    return await batch(
        http,
        lambda i: f"{urls[i % len(urls)]}/v1/chat/completions",
        GW_BODY,
        total,
        CONCURRENCY,
        fresh_session,
    )


def fold(rounds: dict[str, list[float]]) -> dict[str, Any]:
    """Medians over the rounds; latency added over the upstream's; throughput vs 1 node."""
    out: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in rounds.items()}
    for n in NODES:
        k = f"n{n}_"
        if f"{k}p50_ms" not in out:
            continue
        out[f"{k}added_p50_ms"] = round(out[f"{k}p50_ms"] - out["direct_p50_ms"], 3)
        out[f"{k}added_p99_ms"] = round(out[f"{k}p99_ms"] - out["direct_p99_ms"], 3)
        if n > 1 and out.get("n1_per_s"):
            out[f"{k}vs_n1_per_s"] = round(out[f"{k}per_s"] / out["n1_per_s"], 3)
    return out


async def _measure(upstream: str, urls: list[str]) -> dict[str, Any]:
    rounds: dict[str, list[float]] = {}
    async with client() as http:
        for n in NODES:  # warm-up: every node has run turns
            await round_robin(http, urls[:n], 20)
        for _ in range(ROUNDS):
            direct = await batch(http, f"{upstream}/chat/completions", BODY, REQUESTS, CONCURRENCY)
            for key, value in summarize("direct", direct).items():
                rounds.setdefault(key, []).append(value)
            for n in NODES:
                got = await round_robin(http, urls[:n], REQUESTS)
                for key, value in summarize(f"n{n}", got).items():
                    rounds.setdefault(key, []).append(value)
    return fold(rounds)


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements (prints nothing)."""
    with (
        fake_upstream(ANSWER_SECONDS) as upstream,
        fresh_database() as database_url,
        cluster_nodes(upstream, database_url, max(NODES)) as urls,
    ):
        out = asyncio.run(_measure(upstream, urls))
    out["upstream_answer_ms"] = ANSWER_SECONDS * 1000
    out["clients"] = CONCURRENCY
    out["requests_per_batch"] = REQUESTS
    out["rounds"] = ROUNDS
    out["cpu_cores"] = os.cpu_count() or 0
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    return out
