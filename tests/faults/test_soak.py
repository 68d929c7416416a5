"""A soak at constant load whose RSS plateaus (issue 24, faults item 4).

A real ``beamclaw serve`` answers a steady stream of turns — JSON and streamed, from a
few concurrent clients, each moving to a fresh session every ten turns so idle sessions
keep being dropped — for ``BEAMCLAW_FAULT_SOAK_SECONDS`` (30 s here, 1800 in ``make
faults``). The gateway's RSS is sampled throughout; over the second half its least-
squares slope, projected over that half, stays under ``max(5 % of the RSS, 8 MiB)``.
Afterwards every request has succeeded and the process's file descriptors and asyncio
tasks are back near their level after warm-up.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from pathlib import Path

import httpx
import pytest

from beamclaw_core.testing import FakeOpenAIServer, FakeReply

from .gateway_process import GatewayProcess, base_config, free_port
from .knobs import SOAK_SECONDS

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.soak]
"""``soak``: ``make faults`` runs it, ``make test`` leaves it out: a fresh gateway's
bounded caches fill over its first minutes, which a short soak's slope would measure
(docs/faults.md, section 4)."""

WORKERS = 3
PAUSE = 0.05
"""Between two turns of one client: the load is steady, not flat out."""
MiB = 1 << 20
WARM_UP_SECONDS = min(120.0, max(45.0, SOAK_SECONDS / 6))
"""Load before the RSS is watched: the first tens of seconds of a fresh gateway fill its
caches (lazy imports, the SQLite page caches, prompt and wire-form caches), which a 15 s
second half would read as growth."""


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of ``(t, y)`` points (y per second)."""
    mt = statistics.fmean(t for t, _ in points)
    my = statistics.fmean(y for _, y in points)
    den = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (y - my) for t, y in points) / den if den else 0.0


async def _worker(client: httpx.AsyncClient, n: int, until: float, counts: dict[str, int]) -> None:
    i = 0
    while time.monotonic() < until:
        stream = i % 2 == 1
        r = await client.post(
            "/v1/chat/completions",
            headers={"X-Session-Id": f"soak-{n}-{i // 10}"},
            json={
                "model": "beamclaw/default",
                "stream": stream,
                "messages": [{"role": "user", "content": f"turn {i} of client {n}"}],
            },
        )
        ok = r.status_code == 200 and (not stream or r.text.rstrip().endswith("data: [DONE]"))
        ok = ok and '"error"' not in r.text
        counts["ok" if ok else "failed"] += 1
        i += 1
        await asyncio.sleep(PAUSE)


@pytest.mark.timeout(int(SOAK_SECONDS) + 180)
async def test_rss_plateaus_under_constant_load(tmp_path: Path) -> None:
    reply = FakeReply(tokens=tuple(f"word{i} " for i in range(12)), delay=0.005)
    async with FakeOpenAIServer([reply], repeat_last=True, keep_requests=1) as fake:
        port = free_port()
        # transcripts are not indexed: the memory search's keyword index lives in memory
        # and grows with every message it holds (~1.4 KB each, docs/memory.md) -- data
        # kept on purpose, which would hide a leak; this soak looks for leaks
        config = base_config(fake.base_url, port) + (
            "\n[core.maintenance]\ncheck_interval_seconds = 1.0\nlane_idle_seconds = 5.0\n"
            "\n[memory]\nindex_transcripts = false\n"
        )
        gw = GatewayProcess(tmp_path / "gw", config, port)
        await gw.start()
        try:
            async with gw.client() as client:
                counts = {"ok": 0, "failed": 0}
                warm = time.monotonic() + WARM_UP_SECONDS
                await asyncio.gather(*(_worker(client, n, warm, counts) for n in range(WORKERS)))
                fds0, tasks0 = gw.open_fds(), await gw.asyncio_tasks(client)
                start = time.monotonic()
                until = start + SOAK_SECONDS
                samples: list[tuple[float, float]] = []

                async def sample() -> None:
                    every = max(0.5, SOAK_SECONDS / 240)
                    while time.monotonic() < until:
                        samples.append((time.monotonic() - start, float(gw.rss_bytes())))
                        await asyncio.sleep(every)

                await asyncio.gather(
                    sample(), *(_worker(client, n, until, counts) for n in range(WORKERS))
                )
                await asyncio.sleep(6)  # idle sessions are dropped
                fds, tasks = gw.open_fds(), await gw.asyncio_tasks(client)
        finally:
            gw.stop()
    half = [p for p in samples if p[0] >= SOAK_SECONDS / 2]
    rss = statistics.median(y for _, y in half)
    growth = slope(half) * (SOAK_SECONDS / 2)
    bound = max(0.05 * rss, 8 * MiB)
    result = {
        "soak_seconds": SOAK_SECONDS,
        "turns_ok": counts["ok"],
        "turns_failed": counts["failed"],
        "turns_per_second": round(counts["ok"] / SOAK_SECONDS, 1),
        "rss_first_mib": round(samples[0][1] / MiB, 1),
        "rss_second_half_median_mib": round(rss / MiB, 1),
        "rss_last_mib": round(samples[-1][1] / MiB, 1),
        "second_half_growth_mib": round(growth / MiB, 2),
        "bound_mib": round(bound / MiB, 1),
        "fds": [fds0, fds],
        "asyncio_tasks": [tasks0, tasks],
    }
    print("\nsoak:", json.dumps(result))
    if out := os.environ.get("BEAMCLAW_TEST_FAULT_REPORT"):
        Path(out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    assert counts["failed"] == 0, result
    assert counts["ok"] > SOAK_SECONDS, result  # the load really ran
    assert growth <= bound, f"RSS still growing over the second half: {result}"
    assert fds <= fds0 + 3, result
    assert tasks <= tasks0 + 2, result
