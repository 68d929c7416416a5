"""Client side of the load benches: batches of requests at a concurrency, and streams.

Pure measurement: each function returns what it timed; nothing here knows which gateway
it talks to (BeamClaw, the direct upstream, or a peer of ``bench/peers``), only a URL, a
body and the headers to send.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

QUICK = os.environ.get("BENCH_QUICK", "") not in {"", "0"}
"""``BENCH_QUICK=1``: one round of small batches (development), not the figures to publish."""

JSON = {"content-type": "application/json"}


def client(limit: int = 1100) -> aiohttp.ClientSession:
    # idle connections expire before uvicorn's 5 s keep-alive closes them
    connector = aiohttp.TCPConnector(limit=limit, keepalive_timeout=1.0)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=120),
        cookie_jar=aiohttp.DummyCookieJar(),
    )


@dataclass
class Batch:
    """Latencies (seconds) of the requests that succeeded, the failures, and wall time."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    wall: float = 0.0

    @property
    def total(self) -> int:
        return len(self.latencies) + self.errors

    @property
    def per_second(self) -> float:
        return len(self.latencies) / self.wall if self.wall else 0.0

    @property
    def error_rate(self) -> float:
        return self.errors / self.total if self.total else 0.0


Headers = Callable[[], dict[str, str]]


def fresh_session() -> dict[str, str]:
    """A new BeamClaw session per request (``X-Session-Id``)."""
    return {**JSON, "X-Session-Id": uuid.uuid4().hex}


def plain() -> dict[str, str]:
    return JSON


async def batch(
    http: aiohttp.ClientSession,
    url: str | Callable[[int], str],
    body: dict[str, Any],
    total: int,
    concurrency: int,
    headers: Headers = plain,
    each: Callable[[], tuple[dict[str, Any], dict[str, str]]] | None = None,
) -> Batch:
    """``total`` POSTs of ``body`` by ``concurrency`` clients, each sending its next
    request as soon as its previous answer is read (closed loop). ``each``: a new
    (body, headers) per request instead (encoding it is then timed too). ``url``: one
    URL, or the URL of request ``i`` (spreading requests over several gateways)."""
    out = Batch()
    data = orjson.dumps(body)
    left = iter(range(total))

    def target(i: int) -> str:
        return url(i) if callable(url) else url

    async def worker() -> None:
        for i in left:
            start = time.perf_counter()
            if each is not None:
                made, sent = each()
                payload, hdrs = orjson.dumps(made), sent
            else:
                payload, hdrs = data, headers()
            try:
                async with http.post(target(i), data=payload, headers=hdrs) as r:
                    await r.read()
                    ok = r.status == 200
            except (aiohttp.ClientError, TimeoutError):
                ok = False
            if ok:
                out.latencies.append(time.perf_counter() - start)
            else:
                out.errors += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    out.wall = time.perf_counter() - start
    return out


@dataclass
class Stream:
    """One streamed answer: when each content piece arrived (s after the request), the
    text, and whether it ended normally."""

    times: list[float] = field(default_factory=list)
    text: str = ""
    ok: bool = False

    @property
    def ttft(self) -> float:
        return self.times[0] if self.times else float("nan")

    @property
    def max_gap(self) -> float:
        gaps = self.gaps()
        return max(gaps) if gaps else 0.0

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.times, self.times[1:], strict=False)]


def sse_content(line: str) -> str:
    if not line.startswith("data: {"):
        return ""
    choices = json.loads(line[6:]).get("choices") or [{}]
    return choices[0].get("delta", {}).get("content") or ""


async def sse(
    http: aiohttp.ClientSession, url: str, body: dict[str, Any], headers: dict[str, str]
) -> Stream:
    """POST ``body`` with ``stream: true`` and read the SSE answer to its end."""
    out = Stream()
    start = time.perf_counter()
    try:
        async with http.post(
            url, data=orjson.dumps({**body, "stream": True}), headers=headers
        ) as r:
            if r.status != 200:
                return out
            async for raw in r.content:
                line = raw.decode().rstrip("\r\n")
                if piece := sse_content(line):
                    out.times.append(time.perf_counter() - start)
                    out.text += piece
                elif line == "data: [DONE]":
                    out.ok = True
    except (aiohttp.ClientError, TimeoutError):
        out.ok = False
    return out


async def ws_turn(ws: aiohttp.ClientWebSocketResponse, text: str) -> Stream:
    """One turn over BeamClaw's ``/ws``: send ``text``, read events to the turn's end."""
    out = Stream()
    frame = {"type": "message", "id": uuid.uuid4().hex, "text": text, "user": uuid.uuid4().hex}
    start = time.perf_counter()
    await ws.send_str(json.dumps(frame))
    while True:
        msg = await ws.receive()
        if msg.type != aiohttp.WSMsgType.TEXT:
            return out
        event = json.loads(msg.data)
        if event["type"] == "text" and event["text"]:
            out.times.append(time.perf_counter() - start)
            out.text += event["text"]
        if event["type"] in {"turn_done", "turn_error", "cancelled", "dropped"}:
            out.ok = event["type"] == "turn_done"
            return out


async def settle_tasks(read: Callable[[], int], within: float = 15.0) -> int:
    """Poll ``read`` (a task or descriptor count) until three samples in a row agree;
    returns the last sample (the count once background work has finished)."""
    deadline = time.monotonic() + within
    seen: list[int] = []
    while time.monotonic() < deadline:
        seen = [*seen[-2:], await asyncio.to_thread(read)]
        if len(seen) == 3 and len(set(seen)) == 1:
            break
        await asyncio.sleep(0.3)
    return seen[-1]
