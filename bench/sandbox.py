"""Sandbox ``exec`` round trip, cold and warm, on the real Docker engine and image.

A :class:`~beamclaw_sandbox.Sandbox` of a throwaway home runs ``echo ok`` (bash):

* ``cold``: in a key of its own, so the run includes creating and starting its
  container (what a session's first ``exec`` pays);
* ``warm``: again in a key whose container is already running (every later ``exec``);
* ``host_spawn``: the baseline, ``bash -c 'echo ok'`` started on the host.

Rounds interleave cold and warm runs; medians and the lowest..highest (``_rounds``).
Needs Docker and the ``beamclaw-sandbox`` image (``make services``); without them the
area fails with the reason.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from beamclaw_sandbox import Sandbox, SandboxSettings
from beamclaw_sandbox.testing import require_image
from bench._drive import QUICK

ROUNDS = 6 if not QUICK else 2
WARM_PER_ROUND = 3


async def _measure(image: str) -> dict[str, Any]:
    cold: list[float] = []
    warm: list[float] = []
    host: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = Sandbox(SandboxSettings(enabled=True, image=image), home=Path(tmp) / "home")
        await sandbox.start()
        try:
            outcome = await sandbox.run("bench-warm", "echo ok", "bash", 30)
            if outcome.exit_status != 0 or outcome.stdout.strip() != "ok":
                raise RuntimeError(f"sandbox run failed: {outcome}")
            for i in range(ROUNDS):
                start = time.perf_counter()
                await sandbox.run(f"bench-cold-{i}", "echo ok", "bash", 30)
                cold.append(time.perf_counter() - start)
                for _ in range(WARM_PER_ROUND):
                    start = time.perf_counter()
                    await sandbox.run("bench-warm", "echo ok", "bash", 30)
                    warm.append(time.perf_counter() - start)
                start = time.perf_counter()
                proc = await asyncio.create_subprocess_exec(
                    "bash", "-c", "echo ok", stdout=asyncio.subprocess.PIPE
                )
                await proc.communicate()
                host.append(time.perf_counter() - start)
        finally:
            await sandbox.stop()

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 1)

    def spread(values: list[float]) -> str:
        return f"{min(values) * 1000:.0f}..{max(values) * 1000:.0f}"

    return {
        "cold_exec_ms": ms(cold),
        "cold_exec_rounds_ms": spread(cold),
        "warm_exec_ms": ms(warm),
        "warm_exec_rounds_ms": spread(warm),
        "host_spawn_ms": ms(host),
        "image": image,
        "rounds": ROUNDS,
    }


def run() -> dict[str, Any]:
    """Run the benchmark (the image is built first when missing)."""
    return asyncio.run(_measure(require_image().image))
