"""Streaming benchmark: does a token reach the client as soon as the upstream sends it?

A fake OpenAI-compatible upstream (``FakeOpenAIServer``, in a child process, real HTTP)
streams realistic word tokens one event each with a fixed gap, as real providers do:

* ``slow``: 30 tokens at 20 tokens/s (50 ms apart), a typical chat model;
* ``fast``: 100 tokens at 100 tokens/s (10 ms apart).

Each round, interleaved, reads the same stream four ways: directly from the upstream
(the baseline, measured in the same run), through a real gateway's ``/v1`` SSE
(``stream: true``), through its ``/ws`` (each of these turns in a fresh session), and
through the TUI's own data path (``tui``): its daemon backend
(:func:`~beamclaw_cli.tui.chat.open_daemon`: the Conversation port over ``/ws``) feeding its
:class:`~beamclaw_cli.tui.transcript.Transcript`, timed when the transcript hands the
changed entry to the widget (terminal painting itself is not measured). Reported per
case and front end, each the median over ``ROUNDS`` rounds:

* ``<case>_<path>_ttft_p50_ms``: time to the first content chunk; ``added_ttft_p50_ms``
  is the front end's minus the direct one (the issue's goal: <= 10 ms);
* ``chunk_ratio``: content chunks delivered / chunks the upstream sent (goal >= 0.9);
* ``gap_p50_ms``/``gap_p99_ms``: time between consecutive content chunks;
* ``text_lag_p50_ms``/``text_lag_p99_ms``: per upstream token, when the client has all
  of its text, minus when the direct reader had it: what the stream scrubber's held-back
  tail (the rest of a word that could still begin a secret) and the coalescing window
  cost, beyond the first token;
* ``stream_scrub_us_per_token``: CPU time of ``StreamScrubber.feed`` per word token over
  a 2,000-token answer (lines of ~30 tokens), beside ``scrub_whole_us_per_token``, the
  same text scrubbed once as a whole, per token (the baseline it replaces).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import uuid
from typing import Any

import aiohttp
import orjson

from bench.common import fake_upstream_process, percentile

ROUNDS = 5

_WORDS = (
    "Sure! Here is a short answer that streams the way a real model writes it, one word "
    "after another, with punctuation, numbers like 2024 and 42, and ordinary prose such "
    "as you would read in any reply. "
)


def tokens(n: int) -> list[str]:
    """``n`` word tokens (a leading space on all but the first), as tokenizers emit them."""
    words = (_WORDS * (n // 20 + 2)).split()
    return [words[0], *(" " + w for w in words[1:n])]


CASES = {"slow": (30, 0.05), "fast": (100, 0.01)}
"""Case -> (tokens, gap in seconds)."""

_SERVER = """
import asyncio, json, sys
from beamclaw_core.testing import FakeOpenAIServer, FakeReply
from bench.streaming import CASES, tokens

def step(request):
    text = json.dumps(request.body["messages"][-1])  # the TUI's session keeps its history
    for case, (n, gap) in CASES.items():
        if f"bench-case-{case}" in text:
            return FakeReply(tokens=tuple(tokens(n)), delay=gap)
    return FakeReply("?")

async def main():
    async with FakeOpenAIServer([step], repeat_last=True, keep_requests=0) as server:
        print(server.base_url, flush=True)
        loop = asyncio.get_running_loop()
        while await loop.run_in_executor(None, sys.stdin.readline):
            pass

asyncio.run(main())
"""


def _content(line: str) -> str:
    if not line.startswith("data: {"):
        return ""
    choices = json.loads(line[6:]).get("choices") or [{}]
    return choices[0].get("delta", {}).get("content") or ""


class Trace:
    """When each content chunk arrived (seconds after the request) and its text."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.times: list[float] = []
        self.texts: list[str] = []

    def add(self, text: str) -> None:
        if text:
            self.times.append(time.perf_counter() - self.start)
            self.texts.append(text)

    def text_times(self, cumulative: list[int]) -> list[float]:
        """For each cumulative length, when the client first held that much text."""
        out: list[float] = []
        have = 0
        i = 0
        for length in cumulative:
            while have < length and i < len(self.texts):
                have += len(self.texts[i])
                i += 1
            out.append(self.times[i - 1] if i else float("nan"))
        return out


async def _sse(client: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> Trace:
    trace = Trace()
    async with client.post(url, data=orjson.dumps(body), headers=_HEADERS) as r:
        r.raise_for_status()
        async for line in r.content:
            trace.add(_content(line.decode().rstrip("\r\n")))
    return trace


async def _ws(ws: aiohttp.ClientWebSocketResponse, text: str) -> Trace:
    frame = {"type": "message", "id": uuid.uuid4().hex, "text": text, "user": uuid.uuid4().hex}
    trace = Trace()
    await ws.send_str(json.dumps(frame))
    while True:
        event = json.loads(await ws.receive_str())
        if event["type"] == "text":
            trace.add(event["text"])
        if event["type"] in {"turn_done", "turn_error", "cancelled", "dropped"}:
            return trace


async def _tui(backend: Any, text: str) -> Trace:
    """One turn through the TUI's backend and transcript fold (what the screen redraws)."""
    from beamclaw_cli.tui.transcript import Transcript

    transcript = Transcript()
    trace = Trace()
    await backend.send(text)
    async for event in backend.events():
        changed = transcript.apply(event)
        if event["type"] == "text" and changed:
            trace.add(str(event["text"]))
        if event["type"] in {"done", "error", "cancelled", "dropped", "disconnected"}:
            return trace
    return trace


_HEADERS = {"content-type": "application/json"}


def _summary(trace: Trace, direct: Trace, sent: list[str]) -> dict[str, float]:
    gaps = [b - a for a, b in zip(trace.times, trace.times[1:], strict=False)]
    cumulative = [len("".join(sent[: i + 1])) for i in range(len(sent))]
    lags = [
        a - b
        for a, b in zip(trace.text_times(cumulative), direct.text_times(cumulative), strict=True)
    ]
    return {
        "ttft_p50_ms": trace.times[0] * 1000,
        "chunk_ratio": len(trace.times) / len(sent),
        "gap_p50_ms": percentile(gaps, 50) * 1000,
        "gap_p99_ms": percentile(gaps, 99) * 1000,
        "text_lag_p50_ms": percentile(lags, 50) * 1000,
        "text_lag_p99_ms": percentile(lags, 99) * 1000,
    }


def _scrub_cost() -> dict[str, float]:
    from beamclaw_obs import StreamScrubber, scrub

    sent = [t + ("\n" if i % 30 == 29 else "") for i, t in enumerate(tokens(2000))]
    text = "".join(sent)
    scrub(text)
    StreamScrubber().feed(text)  # warm: detect-secrets' formats, the automata
    per_stream: list[float] = []
    whole: list[float] = []
    for _ in range(5):
        scrubber = StreamScrubber()
        start = time.process_time()
        for piece in sent:
            scrubber.feed(piece)
        scrubber.finish()
        per_stream.append((time.process_time() - start) / len(sent))
        start = time.process_time()
        scrub(text + " ")  # not the remembered short-text result
        whole.append((time.process_time() - start) / len(sent))
    return {
        "stream_scrub_us_per_token": round(statistics.median(per_stream) * 1e6, 1),
        "scrub_whole_us_per_token": round(statistics.median(whole) * 1e6, 2),
    }


async def _measure(fake_url: str) -> dict[str, Any]:
    from beamclaw_cli.daemon import Endpoint
    from beamclaw_cli.tui.chat import open_daemon
    from beamclaw_gateway.testing import live_gateway
    from bench.gateway import bench_config

    config = bench_config(fake_url)
    rounds: dict[str, list[float]] = {}
    timeout = aiohttp.ClientTimeout(total=60)
    async with (
        live_gateway(None, config) as gw,
        aiohttp.ClientSession(timeout=timeout) as client,
        client.ws_connect(gw.ws_url) as ws,
    ):
        await ws.receive_str()  # authenticated
        host, port = gw.base_url.removeprefix("http://").rsplit(":", 1)
        tui = await open_daemon(
            Endpoint(host, int(port)), agent="default", user_id="bench-tui", token=None
        )
        direct_url = f"{fake_url}/chat/completions"
        gw_url = f"{gw.base_url}/v1/chat/completions"
        for r in range(ROUNDS + 1):  # round 0 warms up
            for case, (n, _) in CASES.items():
                sent = tokens(n)
                prompt = f"bench-case-{case}"
                messages = [{"role": "user", "content": prompt}]
                direct = await _sse(
                    client, direct_url, {"model": "m", "messages": messages, "stream": True}
                )
                body = {"model": "beamclaw/default", "messages": messages, "stream": True}
                via = {
                    "sse": await _sse(client, gw_url, {**body, "user": uuid.uuid4().hex}),
                    "ws": await _ws(ws, prompt),
                    "tui": await _tui(tui, prompt),
                }
                if not r:
                    continue
                rounds.setdefault(f"{case}_direct_ttft_p50_ms", []).append(direct.times[0] * 1000)
                rounds.setdefault(f"{case}_direct_chunks", []).append(len(direct.times))
                for path, trace in via.items():
                    for key, value in _summary(trace, direct, sent).items():
                        rounds.setdefault(f"{case}_{path}_{key}", []).append(value)
                    rounds.setdefault(f"{case}_{path}_added_ttft_p50_ms", []).append(
                        (trace.times[0] - direct.times[0]) * 1000
                    )
        await tui.close()
    out: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in rounds.items()}
    out.update(_scrub_cost())
    out["stream_coalesce_ms"] = getattr(config.core.agentic_loop, "stream_coalesce_ms", None)
    out["goal_added_ttft_p50_ms"] = 10.0
    out["goal_chunk_ratio"] = 0.9
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    return out


def run() -> dict[str, Any]:
    """Run the benchmark; returns the measurements (prints nothing)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *sys.path])}
    with fake_upstream_process(_SERVER, env) as upstream:
        from beamclaw_gateway.server import loop_runner

        name, run_loop = loop_runner("auto")
        return {**run_loop(_measure(upstream.base_url)), "event_loop": name}
