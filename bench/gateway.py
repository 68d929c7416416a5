"""Gateway overhead benchmark: the OpenAI-compatible API vs calling the LLM server directly.

The fake OpenAI-compatible server (``beamclaw_core.testing.FakeOpenAIServer``) runs in a
child process. In the same run this measures, with one client of the kind the gateway's
provider uses itself (aiohttp, the body encoded with orjson per request), so neither side
of the comparison pays for a slower HTTP stack than the other:

* the direct baseline: ``POST /v1/chat/completions`` on the fake server (JSON and SSE);
* the same request through a real gateway (uvicorn on 127.0.0.1, the configured OpenAI
  provider pointed at the fake).

The whole run (client, gateway and the direct baseline alike) uses the event loop
``beamclaw serve`` would use by default (``[gateway.http] loop = "auto"``: uvloop where
installed), reported as ``event_loop``.

Direct requests and gateway turns alternate in blocks of ``BLOCK`` (``_paired``), so both
sides of a comparison sample the same moments of a machine whose speed drifts. Each
direct block starts on a settled process: background work earlier turns left behind
(transcript indexing) is let finish first and charged to the gateway, never to the
direct baseline; gateway turns run back to back within a block, as a client sending turn
after turn sees them. Reported, each the median over ``ROUNDS`` rounds:

* ``added_p50_ms``/``added_p99_ms``: a one-step non-streaming turn in a fresh session per
  request (the headline figure, as in issue 8) minus the direct JSON call;
  ``gateway_vs_direct_p50`` is the same comparison as a ratio, which moves less than
  milliseconds do between machines of different speed, and ``added_p50_rounds_ms`` the
  lowest and highest of the rounds' own differences (how much the machine moved);
* ``agent_request_extra_p50_ms``: a direct call with the exact body a gateway turn sends
  upstream (its system prompt and 17 tool schemas, ~20 KB) minus one with the minimal
  body, in alternating blocks: the part of the added latency that is the fake server and
  the client handling the agent's larger request; ``added_beyond_agent_request_p50_ms``
  is the headline minus that part (reported beside it, not instead of it);
* ``added_same_session_p50_ms``: the same turn in one long-lived session (no session
  creation; what a chat client that keeps its ``X-Session-Id`` pays);
* ``direct_stream_p50_ms``: the direct call made the way the provider makes it inside a
  turn (``stream: true``, the whole stream read), to show what the upstream call itself
  costs;
* ``added_cpu_per_turn_ms``: CPU time of this process per gateway turn (background work
  the turn leaves behind included) minus per direct request: what a turn costs the
  machine, steadier than wall-clock latency when other work shares the cores;
* ``framework_floor_added_p50_ms``: a FastAPI app on uvicorn that only validates the
  request into the gateway's model, makes the one upstream call and answers it
  (:mod:`bench._floor`), minus the direct call, in alternating blocks: the least this
  stack adds; ``added_beyond_floor_p50_ms`` is the headline minus it (BeamClaw's own
  work: session, store, prompt, memory, loop);
* ``core_in_process_p50_ms``: the same fresh-session turn through ``Core.send`` in the
  gateway's process, so ``http_layer_p50_ms = gateway - core`` is the HTTP layer's share;
* added time to first streamed content token (p50), turns/s at 1 and 50 concurrent
  clients (and the direct requests/s), and memory per idle session (tracemalloc, after
  each of ``IDLE_SESSIONS`` sessions ran one turn).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import time
import tracemalloc
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from bench._floor import served_floor
from bench.common import fake_upstream_process, max_rss_mb, percentile

if TYPE_CHECKING:
    from beamclaw_core.api import Core
    from beamclaw_gateway.config import BeamclawConfig

ROUNDS = 3
LATENCY_REQUESTS = 150
BLOCK = 10
THROUGHPUT_TURNS = {1: 60, 50: 300}
IDLE_SESSIONS = 200
SETTLE_SECONDS = 10.0

_SERVER = """
import asyncio, sys
from beamclaw_core.testing import FakeOpenAIServer, FakeReply

async def main():
    reply = FakeReply("The quick brown fox jumps over the lazy dog.", chunk_size=8)
    async with FakeOpenAIServer([reply], repeat_last=True, keep_requests=1) as server:
        print(server.base_url, flush=True)
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if line.strip() == "last":  # the body of the last request, on one line
                print(server.requests[-1].raw.decode(), flush=True)

asyncio.run(main())
"""

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "bench"}]}
STREAM_BODY = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
GW_BODY = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "bench"}]}


async def _settle(core: Core) -> None:
    """Finish background work earlier turns left: transcript indexing at once (its batch
    window would otherwise outlast the wait below, and its work land in the next
    phase), then wait (at most ``SETTLE_SECONDS``) until the number of tasks stays the
    same for three samples in a row."""
    await core.flush_indexing()
    deadline = time.monotonic() + SETTLE_SECONDS
    counts: list[int] = []
    while time.monotonic() < deadline:
        counts = [*counts[-2:], len(asyncio.all_tasks())]
        if len(counts) == 3 and len(set(counts)) == 1:
            return
        await asyncio.sleep(0.02)


_JSON = {"content-type": "application/json"}


def _headers(session: str | None) -> dict[str, str]:
    return {**_JSON, "X-Session-Id": session} if session else _JSON


async def _post(
    client: aiohttp.ClientSession, url: str, body: dict[str, Any], session: str | None
) -> float:
    start = time.perf_counter()
    async with client.post(url, data=orjson.dumps(body), headers=_headers(session)) as r:
        await r.read()
    elapsed = time.perf_counter() - start
    r.raise_for_status()
    return elapsed


async def _stream_all(client: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> float:
    start = time.perf_counter()
    async with client.post(url, data=orjson.dumps(body), headers=_JSON) as r:
        r.raise_for_status()
        while await r.content.readany():
            pass
    return time.perf_counter() - start


async def _paired(
    core: Core,
    client: aiohttp.ClientSession,
    direct_url: str,
    gw_url: str,
    same_session: str | None,
) -> tuple[list[float], list[float], float, float]:
    """``LATENCY_REQUESTS`` direct requests and as many gateway turns (``same_session``
    None: a fresh session per turn), in interleaved blocks of ``BLOCK`` so that both sides
    sample the same minutes of a machine whose speed drifts (a shared VM moved the added
    p50 by 2-6 ms between back-to-back phases of one run). Each direct block starts on a
    settled process; gateway turns run back to back within a block, and the background
    work they leave (transcript indexing) finishes in the settle that follows, charged to
    the gateway. Also returns this process's CPU seconds per direct request and per
    gateway turn (every thread: client, gateway, core, database and obs workers; the fake
    server is another process)."""
    direct: list[float] = []
    via: list[float] = []
    direct_cpu = 0.0
    await _settle(core)  # what earlier phases left behind is nobody's here
    cpu = time.process_time()
    for block in range(LATENCY_REQUESTS // BLOCK):
        if block:
            await _settle(core)
        start = time.process_time()
        direct.extend([await _post(client, direct_url, BODY, None) for _ in range(BLOCK)])
        direct_cpu += time.process_time() - start
        via.extend(
            [
                await _post(client, gw_url, GW_BODY, same_session or uuid.uuid4().hex)
                for _ in range(BLOCK)
            ]
        )
    await _settle(core)
    via_cpu = time.process_time() - cpu - direct_cpu
    return direct, via, direct_cpu / len(direct), via_cpu / len(via)


async def _paired_floor(
    client: aiohttp.ClientSession, direct_url: str, floor_url: str
) -> tuple[list[float], list[float]]:
    """Direct requests and requests through the framework floor (:mod:`bench._floor`), in
    alternating blocks of ``BLOCK``."""
    direct: list[float] = []
    floor: list[float] = []
    for _ in range(LATENCY_REQUESTS // BLOCK):
        direct.extend([await _post(client, direct_url, BODY, None) for _ in range(BLOCK)])
        floor.extend([await _post(client, floor_url, GW_BODY, None) for _ in range(BLOCK)])
    return direct, floor


async def _request_sizes(
    client: aiohttp.ClientSession, direct_url: str, agent_body: dict[str, Any]
) -> tuple[list[float], list[float]]:
    """Direct requests with the minimal body and with the body a gateway turn sends (its
    system prompt and tool schemas), in alternating blocks: how much of the added latency
    is the fake server and the client handling the agent's larger request."""
    minimal: list[float] = []
    agent: list[float] = []
    for _ in range(LATENCY_REQUESTS // BLOCK):
        minimal.extend([await _post(client, direct_url, BODY, None) for _ in range(BLOCK)])
        agent.extend([await _post(client, direct_url, agent_body, None) for _ in range(BLOCK)])
    return minimal, agent


async def _first_token(
    client: aiohttp.ClientSession, url: str, body: dict[str, Any], session: str | None
) -> float:
    start = time.perf_counter()
    first = 0.0
    data = orjson.dumps({**body, "stream": True})
    async with client.post(url, data=data, headers=_headers(session)) as r:
        async for line in r.content:
            if not first and _has_content(line.decode().rstrip("\r\n")):
                first = time.perf_counter() - start
    return first


def _has_content(line: str) -> bool:
    if not line.startswith("data: {"):
        return False
    choices = json.loads(line[6:]).get("choices") or [{}]
    return bool(choices[0].get("delta", {}).get("content"))


async def _throughput(
    client: aiohttp.ClientSession, url: str, body: dict[str, Any], concurrency: int, fresh: bool
) -> float:
    total = THROUGHPUT_TURNS[concurrency]
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            queue.get_nowait()
            await _post(client, url, body, uuid.uuid4().hex if fresh else None)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return total / (time.perf_counter() - start)


def _client() -> aiohttp.ClientSession:
    # idle connections expire well before uvicorn's 5 s keep-alive timeout closes them
    # (reusing one the server is closing at that moment resets the request)
    connector = aiohttp.TCPConnector(limit=100, keepalive_timeout=1.0)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=60),
        cookie_jar=aiohttp.DummyCookieJar(),
    )


def bench_config(fake_url: str) -> BeamclawConfig:
    """The gateway's configuration for benchmarks: quiet, every agent on the fake server."""
    from beamclaw_core.providers import ProviderSettings
    from beamclaw_gateway.testing import quiet_config
    from beamclaw_obs import Secret

    config = quiet_config()
    config.obs.log_level = "ERROR"
    config.obs.file_log_level = "ERROR"
    config.core.default_provider = "fake"
    config.core.providers = {
        "fake": ProviderSettings(
            kind="openai",
            base_url=fake_url,
            model="fake-model",
            api_key=Secret.model_validate("sk-bench"),
        )
    }
    return config


async def _measure(fake_url: str, last_request: Callable[[], bytes]) -> dict[str, Any]:
    from beamclaw_core.sessions import SessionAddress
    from beamclaw_gateway.testing import live_gateway

    config = bench_config(fake_url)
    direct_url = f"{fake_url}/chat/completions"
    rounds: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        rounds.setdefault(key, []).append(value)

    def pct(values: list[float], p: float) -> float:
        return percentile(values, p) * 1000

    async with (
        live_gateway(None, config) as gw,
        _client() as client,
        served_floor(fake_url) as floor_url,
    ):
        gw_url = f"{gw.base_url}/v1/chat/completions"
        core = gw.runtime.core
        address = SessionAddress("api:bench", "default", "api")
        await _paired(core, client, direct_url, gw_url, None)  # warm-up
        agent_body = orjson.loads(await asyncio.to_thread(last_request))  # a turn's request
        for _ in range(ROUNDS):
            direct, via, direct_cpu, via_cpu = await _paired(core, client, direct_url, gw_url, None)
            add("direct_cpu_per_request_ms", direct_cpu * 1000)
            add("gateway_cpu_per_turn_ms", via_cpu * 1000)
            add("direct_p50_ms", pct(direct, 50))
            add("direct_p99_ms", pct(direct, 99))
            add("gateway_p50_ms", pct(via, 50))
            add("gateway_p99_ms", pct(via, 99))
            add("round_added_p50_ms", pct(via, 50) - pct(direct, 50))
            await _settle(core)
            direct, floor = await _paired_floor(client, direct_url, floor_url)
            add("floor_direct_p50_ms", pct(direct, 50))
            add("floor_p50_ms", pct(floor, 50))
            minimal, agent = await _request_sizes(client, direct_url, agent_body)
            add("direct_agent_request_p50_ms", pct(agent, 50))
            add("agent_request_extra_p50_ms", pct(agent, 50) - pct(minimal, 50))
            session = f"bench-{uuid.uuid4().hex}"
            direct, via, _, _ = await _paired(core, client, direct_url, gw_url, session)
            add("direct_same_session_p50_ms", pct(direct, 50))
            add("gateway_same_session_p50_ms", pct(via, 50))
            await _settle(core)
            streamed = [
                await _stream_all(client, direct_url, STREAM_BODY) for _ in range(LATENCY_REQUESTS)
            ]
            add("direct_stream_p50_ms", pct(streamed, 50))
            await _settle(core)
            in_process: list[float] = []
            for _ in range(LATENCY_REQUESTS):
                start = time.perf_counter()
                handle = await core.send(
                    address, "bench", session_id=uuid.uuid4().hex, drafts=False
                )
                await handle.result()
                in_process.append(time.perf_counter() - start)
            add("core_in_process_p50_ms", pct(in_process, 50))
            await _settle(core)
            d_first: list[float] = []
            g_first: list[float] = []
            for _ in range(LATENCY_REQUESTS // 3):
                d_first.append(await _first_token(client, direct_url, BODY, None))
                g_first.append(await _first_token(client, gw_url, GW_BODY, uuid.uuid4().hex))
            add("direct_first_token_p50_ms", pct(d_first, 50))
            add("gateway_first_token_p50_ms", pct(g_first, 50))
            for c in THROUGHPUT_TURNS:
                await _settle(core)
                add(
                    f"direct_requests_per_s_c{c}",
                    await _throughput(client, direct_url, BODY, c, False),
                )
                await _settle(core)
                add(
                    f"gateway_turns_per_s_c{c}", await _throughput(client, gw_url, GW_BODY, c, True)
                )
        await _settle(core)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(IDLE_SESSIONS):
            await _post(client, gw_url, GW_BODY, uuid.uuid4().hex)
        await _settle(core)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        sessions = len(await core.list_sessions())
    out: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in rounds.items()}
    out["added_p50_ms"] = round(out["gateway_p50_ms"] - out["direct_p50_ms"], 3)
    out["added_p99_ms"] = round(out["gateway_p99_ms"] - out["direct_p99_ms"], 3)
    out["gateway_vs_direct_p50"] = round(out["gateway_p50_ms"] / out["direct_p50_ms"], 2)
    out["framework_floor_added_p50_ms"] = round(out["floor_p50_ms"] - out["floor_direct_p50_ms"], 3)
    out["added_beyond_floor_p50_ms"] = round(
        out["added_p50_ms"] - out["framework_floor_added_p50_ms"], 3
    )
    out["added_beyond_agent_request_p50_ms"] = round(
        out["added_p50_ms"] - out["agent_request_extra_p50_ms"], 3
    )
    spread = rounds.pop("round_added_p50_ms")
    out.pop("round_added_p50_ms")
    out["added_p50_rounds_ms"] = f"{min(spread):.2f}..{max(spread):.2f}"
    out["added_same_session_p50_ms"] = round(
        out["gateway_same_session_p50_ms"] - out["direct_same_session_p50_ms"], 3
    )
    out["added_cpu_per_turn_ms"] = round(
        out["gateway_cpu_per_turn_ms"] - out["direct_cpu_per_request_ms"], 3
    )
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
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    out["goal_added_p50_ms"] = 3.0
    return out


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements and ratios (prints nothing)."""
    with fake_upstream_process(_SERVER) as upstream:
        from beamclaw_gateway.server import loop_runner

        name, run_loop = loop_runner("auto")
        return {
            **run_loop(_measure(upstream.base_url, upstream.last_request)),
            "event_loop": name,
        }
