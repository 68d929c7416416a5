"""Gateway overhead benchmark: the OpenAI-compatible API vs calling the LLM server directly.

The fake OpenAI-compatible server (``beamclaw_core.testing.FakeOpenAIServer``) runs in a
child process. In the same run this measures, with one httpx client:

* the direct baseline: ``POST /v1/chat/completions`` on the fake server (JSON and SSE);
* the same request through a real gateway (uvicorn on 127.0.0.1, the configured OpenAI
  provider pointed at the fake, a fresh session per request so turns never queue).

Reported: added latency of a one-step non-streaming turn (p50/p99 of gateway minus the
direct p50/p99), the same turn through ``Core.send`` in-process (so the HTTP layer's
own share is ``gateway - core``), added time to first streamed content token (p50), turns/s at 1 and 50
concurrent clients (and the direct requests/s for comparison), and memory per idle
session (tracemalloc, after each of ``IDLE_SESSIONS`` sessions ran one turn). Each
figure is the median over ``ROUNDS`` rounds.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from typing import Any

import httpx

from bench.common import max_rss_mb, percentile

ROUNDS = 3
LATENCY_REQUESTS = 150
THROUGHPUT_TURNS = {1: 60, 50: 300}
IDLE_SESSIONS = 200

_SERVER = """
import asyncio, sys
from beamclaw_core.testing import FakeOpenAIServer, FakeReply

async def main():
    reply = FakeReply("The quick brown fox jumps over the lazy dog.", chunk_size=8)
    async with FakeOpenAIServer([reply], repeat_last=True) as server:
        print(server.base_url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "bench"}]}
GW_BODY = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "bench"}]}


async def _latencies(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], fresh: bool
) -> list[float]:
    out: list[float] = []
    for _ in range(LATENCY_REQUESTS):
        headers = {"X-Session-Id": uuid.uuid4().hex} if fresh else {}
        start = time.perf_counter()
        r = await client.post(url, json=body, headers=headers)
        out.append(time.perf_counter() - start)
        r.raise_for_status()
    return out


async def _first_tokens(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], fresh: bool
) -> list[float]:
    out: list[float] = []
    for _ in range(LATENCY_REQUESTS // 3):
        headers = {"X-Session-Id": uuid.uuid4().hex} if fresh else {}
        start = time.perf_counter()
        first = 0.0
        async with client.stream("POST", url, json={**body, "stream": True}, headers=headers) as r:
            async for line in r.aiter_lines():
                if not first and _has_content(line):
                    first = time.perf_counter() - start
        out.append(first)
    return out


def _has_content(line: str) -> bool:
    if not line.startswith("data: {"):
        return False
    choices = json.loads(line[6:]).get("choices") or [{}]
    return bool(choices[0].get("delta", {}).get("content"))


async def _throughput(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], concurrency: int, fresh: bool
) -> float:
    total = THROUGHPUT_TURNS[concurrency]
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            queue.get_nowait()
            headers = {"X-Session-Id": uuid.uuid4().hex} if fresh else {}
            (await client.post(url, json=body, headers=headers)).raise_for_status()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return total / (time.perf_counter() - start)


async def _measure(fake_url: str) -> dict[str, Any]:
    from beamclaw_core.providers import ProviderSettings
    from beamclaw_gateway.testing import live_gateway, quiet_config
    from beamclaw_obs import Secret

    config = quiet_config()
    config.obs.log_level = "ERROR"
    config.obs.file_log_level = "ERROR"
    config.core.default_provider = "fake"
    config.core.providers = {
        "fake": ProviderSettings(
            kind="openai", base_url=fake_url, model="fake-model", api_key=Secret(literal="sk-bench")
        )
    }
    direct_url = f"{fake_url}/chat/completions"
    rounds: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        rounds.setdefault(key, []).append(value)

    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with (
        live_gateway(None, config) as gw,
        httpx.AsyncClient(limits=limits, timeout=60) as client,
    ):
        gw_url = f"{gw.base_url}/v1/chat/completions"
        await _latencies(client, direct_url, BODY, False)  # warm-up
        await _latencies(client, gw_url, GW_BODY, True)
        for _ in range(ROUNDS):
            direct = await _latencies(client, direct_url, BODY, False)
            via = await _latencies(client, gw_url, GW_BODY, True)
            add("direct_p50_ms", percentile(direct, 50) * 1000)
            add("direct_p99_ms", percentile(direct, 99) * 1000)
            add("gateway_p50_ms", percentile(via, 50) * 1000)
            add("gateway_p99_ms", percentile(via, 99) * 1000)
            d_first = await _first_tokens(client, direct_url, BODY, False)
            g_first = await _first_tokens(client, gw_url, GW_BODY, True)
            add("direct_first_token_p50_ms", percentile(d_first, 50) * 1000)
            add("gateway_first_token_p50_ms", percentile(g_first, 50) * 1000)
            for c in THROUGHPUT_TURNS:
                add(
                    f"direct_requests_per_s_c{c}",
                    await _throughput(client, direct_url, BODY, c, False),
                )
                add(
                    f"gateway_turns_per_s_c{c}", await _throughput(client, gw_url, GW_BODY, c, True)
                )
        core = gw.runtime.core
        from beamclaw_core.sessions import SessionAddress

        address = SessionAddress("api:bench", "default", "api")
        for _ in range(ROUNDS):
            in_process: list[float] = []
            for _ in range(LATENCY_REQUESTS):
                start = time.perf_counter()
                handle = await core.send(address, "bench", session_id=uuid.uuid4().hex)
                await handle.result()
                in_process.append(time.perf_counter() - start)
            add("core_in_process_p50_ms", percentile(in_process, 50) * 1000)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(IDLE_SESSIONS):
            r = await client.post(gw_url, json=GW_BODY, headers={"X-Session-Id": uuid.uuid4().hex})
            r.raise_for_status()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        sessions = len(await core.list_sessions())
    out = {k: round(statistics.median(v), 3) for k, v in rounds.items()}
    out["added_p50_ms"] = round(out["gateway_p50_ms"] - out["direct_p50_ms"], 3)
    out["added_p99_ms"] = round(out["gateway_p99_ms"] - out["direct_p99_ms"], 3)
    out["core_in_process_p50_ms"] = round(statistics.median(rounds["core_in_process_p50_ms"]), 3)
    out["http_layer_p50_ms"] = round(out["gateway_p50_ms"] - out["core_in_process_p50_ms"], 3)
    out["added_first_token_p50_ms"] = round(
        out["gateway_first_token_p50_ms"] - out["direct_first_token_p50_ms"], 3
    )
    for c in THROUGHPUT_TURNS:
        out[f"gateway_vs_direct_throughput_c{c}"] = round(
            out[f"gateway_turns_per_s_c{c}"] / out[f"direct_requests_per_s_c{c}"], 3
        )
    out["memory_per_idle_session_kib"] = round((after - before) / IDLE_SESSIONS / 1024, 2)
    out["sessions_total"] = sessions
    out["peak_rss_mib"] = round(max_rss_mb(), 1)
    out["goal_added_p50_ms"] = 3.0
    return out


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements and ratios (prints nothing)."""
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    saved = os.environ.get("BEAMCLAW_HOME")
    try:
        assert server.stdout is not None
        fake_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as home:
            os.environ["BEAMCLAW_HOME"] = home
            return asyncio.run(_measure(fake_url))
    finally:
        if saved is None:
            os.environ.pop("BEAMCLAW_HOME", None)
        else:
            os.environ["BEAMCLAW_HOME"] = saved
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
