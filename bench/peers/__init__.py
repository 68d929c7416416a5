"""BeamClaw beside LiteLLM's proxy and nanobot, in one run, against one fake upstream.

Opt-in (``make bench-peers`` installs the peers into ``.bench-peers/`` and runs it;
``python -m bench peers`` runs it alone). The fake upstream (``bench._served``: 20 ms
to answer, the first streamed event after 20 ms) runs in its own process for the whole
run; each gateway in turn (``targets``) is launched, measured and stopped, and each
measurement is paired with direct requests to the upstream made in the same moments:

* ``<gw>_cold_start_s``: launch to the first 200 on its readiness URL;
* ``<gw>_added_p50_ms``/``p99``: a one-turn fresh session through the gateway minus a
  direct request, in interleaved blocks of ``BLOCK`` (``ADDED_TURNS`` of each);
* ``<gw>_added_ttft_p50_ms``: time to the first streamed content chunk, minus the
  direct stream's, interleaved (``TTFT_TURNS`` of each);
* ``<gw>_c<N>_p50_ms``/``p90``/``p99`` and ``_per_s``: ``LOAD`` turns at 1, 10 and 50
  concurrent clients, fresh sessions (``direct_c<N>_*``: the upstream, same sizes);
* ``<gw>_turn20_added_ms``/``turn300_added_ms``: one session of ``HISTORY_TURNS`` turns,
  each followed by a direct request carrying the same history (the client keeps it);
  the added latency's median over turns 11-30 and 281-300, and their ratio
  ``<gw>_history_growth``; ``series_<gw>_added_by_turn_ms`` is the median per 10 turns;
* ``<gw>_rss_mb_ready`` and ``<gw>_rss_mb_after_1k_sessions`` (1,000 one-turn sessions
  at 10 clients; the process and any it started).

A peer not installed is reported as ``<gw>_skipped``.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from bench._drive import QUICK, Batch, batch, client, sse
from bench._served import fake_upstream
from bench.common import percentile
from bench.peers.targets import TARGETS, Body, Message, Running, direct_body

DEFAULT = False

BLOCK = 10
ADDED_TURNS = 60 if not QUICK else 20
TTFT_TURNS = 30 if not QUICK else 10
LOAD = {1: 30, 10: 60, 50: 100} if not QUICK else {1: 10, 10: 30, 50: 50}
HISTORY_TURNS = 300 if not QUICK else 40
SESSIONS = 1000 if not QUICK else 100
EARLY = (11, 30)
LATE = (HISTORY_TURNS - 19, HISTORY_TURNS)


async def _turn(
    http: aiohttp.ClientSession,
    url: str,
    make: Body,
    text: str,
    session: str,
    history: list[Message],
) -> float:
    body, headers = make(text, session, history)
    start = time.perf_counter()
    async with http.post(url, data=orjson.dumps(body), headers=headers) as r:
        payload = await r.read()
    if r.status != 200:
        raise RuntimeError(f"{url}: {r.status} {payload[:200]!r}")
    return time.perf_counter() - start


async def _added(http: aiohttp.ClientSession, gw: Running, direct_url: str) -> dict[str, float]:
    via: list[float] = []
    direct: list[float] = []
    for _ in range(ADDED_TURNS // BLOCK):
        for _ in range(BLOCK):
            direct.append(await _turn(http, direct_url, direct_body, "bench", "", []))
        for _ in range(BLOCK):
            via.append(await _turn(http, gw.url, gw.body, "bench", uuid.uuid4().hex, []))
    return {
        "added_p50_ms": (percentile(via, 50) - percentile(direct, 50)) * 1000,
        "added_p99_ms": (percentile(via, 99) - percentile(direct, 99)) * 1000,
        "p50_ms": percentile(via, 50) * 1000,
    }


async def _ttft(http: aiohttp.ClientSession, gw: Running, direct_url: str) -> dict[str, float]:
    via: list[float] = []
    direct: list[float] = []
    for _ in range(TTFT_TURNS):
        body, headers = direct_body("bench", "", [])
        direct.append((await sse(http, direct_url, body, headers)).ttft)
        body, headers = gw.body("bench", uuid.uuid4().hex, [])
        via.append((await sse(http, gw.url, body, headers)).ttft)
    return {
        "ttft_p50_ms": percentile(via, 50) * 1000,
        "added_ttft_p50_ms": (percentile(via, 50) - percentile(direct, 50)) * 1000,
    }


def _load_figures(prefix: str, got: Batch) -> dict[str, float]:
    lat = got.latencies or [float("nan")]
    return {
        f"{prefix}_p50_ms": percentile(lat, 50) * 1000,
        f"{prefix}_p90_ms": percentile(lat, 90) * 1000,
        f"{prefix}_p99_ms": percentile(lat, 99) * 1000,
        f"{prefix}_per_s": got.per_second,
        f"{prefix}_error_rate": got.error_rate,
    }


def _fresh(gw: Running) -> Callable[[], tuple[dict[str, Any], dict[str, str]]]:
    """A one-turn request in a new session, each call."""
    return lambda: gw.body("bench", uuid.uuid4().hex, [])


async def _load(http: aiohttp.ClientSession, gw: Running) -> dict[str, float]:
    out: dict[str, float] = {}
    for c, n in LOAD.items():
        got = await batch(http, gw.url, {}, n, c, each=_fresh(gw))
        out.update(_load_figures(f"c{c}", got))
    return out


async def _history(http: aiohttp.ClientSession, gw: Running, direct_url: str) -> dict[str, Any]:
    session = uuid.uuid4().hex
    history: list[Message] = []
    added: list[float] = []
    for turn in range(HISTORY_TURNS):
        text = f"bench turn {turn}"
        via = await _turn(http, gw.url, gw.body, text, session, history)
        direct = await _turn(http, direct_url, direct_body, text, "", history)
        added.append(via - direct)
        history += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": "The quick brown fox jumps over the lazy dog."},
        ]

    def window(w: tuple[int, int]) -> float:
        return statistics.median(added[w[0] - 1 : w[1]]) * 1000

    early, late = window(EARLY), window(LATE)
    return {
        "turn20_added_ms": early,
        "turn300_added_ms": late,
        "history_growth": late / early if early > 0 else float("nan"),
        "series_added_by_turn_ms": [
            round(statistics.median(added[i : i + 10]) * 1000, 2) for i in range(0, len(added), 10)
        ],
    }


async def _sessions(http: aiohttp.ClientSession, gw: Running) -> float:
    got = await batch(http, gw.url, {}, SESSIONS, 10, each=_fresh(gw))
    if got.errors:
        raise RuntimeError(f"{gw.name}: {got.errors} of {SESSIONS} turns failed")
    await asyncio.sleep(2.0)
    return gw.rss_mb()


async def _measure(gw: Running, direct_url: str) -> dict[str, Any]:
    out: dict[str, Any] = {"cold_start_s": gw.ready_seconds}
    async with client() as http:
        for _ in range(5):  # warm-up
            await _turn(http, gw.url, gw.body, "warm", uuid.uuid4().hex, [])
        out["rss_mb_ready"] = gw.rss_mb()
        out.update(await _added(http, gw, direct_url))
        out.update(await _ttft(http, gw, direct_url))
        out.update(await _load(http, gw))
        out.update(await _history(http, gw, direct_url))
        out["rss_mb_after_1k_sessions"] = await _sessions(http, gw)
    return out


async def _direct_load(direct_url: str) -> dict[str, float]:
    out: dict[str, float] = {}
    body, _ = direct_body("bench", "", [])
    async with client() as http:
        for c, n in LOAD.items():
            out.update(_load_figures(f"direct_c{c}", await batch(http, direct_url, body, n, c)))
    return out


def _rounded(prefix: str, figures: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in figures.items():
        name = f"series_{prefix}_{key[7:]}" if key.startswith("series_") else f"{prefix}_{key}"
        out[name] = round(value, 3) if isinstance(value, float) else value
    return out


def run() -> dict[str, Any]:
    """Run the comparison; returns every gateway's figures (prints progress only)."""
    out: dict[str, Any] = {}
    with fake_upstream() as upstream:
        direct_url = f"{upstream}/chat/completions"
        out.update({k: round(v, 3) for k, v in asyncio.run(_direct_load(direct_url)).items()})
        measured: list[str] = []
        for name, (launch, needs) in TARGETS.items():
            if needs is not None and not needs.exists():
                out[f"{name}_skipped"] = f"not installed ({needs}); run `make bench-peers`"
                continue
            try:
                with launch(upstream) as gw:
                    out.update(_rounded(name, asyncio.run(_measure(gw, direct_url))))
                measured.append(name)
            except (RuntimeError, OSError, aiohttp.ClientError, TimeoutError) as exc:
                out[f"{name}_error"] = f"{type(exc).__name__}: {exc}"[:300]
        out["gateways"] = measured
    out.update(
        upstream_answer_ms=20.0,
        history_turns=HISTORY_TURNS,
        sessions=SESSIONS,
        load_sizes=", ".join(f"c{c}: {n}" for c, n in LOAD.items()),
    )
    return out
