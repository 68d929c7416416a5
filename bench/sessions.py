"""Memory over many short sessions: idle lanes leave memory (issue 17, defect 2).

10,000 sessions, one turn each (scripted provider, SQLite, in process through ``Core``),
with maintenance running on a virtual clock that moves 1 s per session and
``lane_idle_seconds = 30``: a session's lane is evicted about 30 sessions after its turn.
RSS is sampled (after a ``gc.collect()``) every 1,000 sessions.

* ``rss_mb_at_1k`` / ``rss_mb_at_10k``; ``rss_growth_1k_to_10k_mb`` and its ratio:
  flat means the 9,000 sessions after the first thousand left (almost) nothing behind.
* ``lanes_in_memory_at_end``: lanes still loaded (the last ~30 sessions').
* ``sessions_stored``: every session is still in the database (eviction deletes nothing).
* ``control_kib_per_session_kept``: the same turns with eviction held off (2,000
  sessions): what each lane left in memory would cost, RSS growth from 1k to 2k / 1,000.
"""

from __future__ import annotations

import gc
import tempfile
from pathlib import Path
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import Reply, ScriptedProvider, VirtualTime
from beamclaw_memory import Database
from bench.common import rss_mb, timer

SESSIONS = 10_000
CONTROL_SESSIONS = 2_000
SAMPLE_EVERY = 1_000
LANE_IDLE_SECONDS = 30.0
CHECK_INTERVAL_SECONDS = 10.0


async def _drive(sessions: int, lane_idle_seconds: float) -> tuple[dict[int, float], int, int]:
    """``sessions`` one-turn sessions; RSS every ``SAMPLE_EVERY``, lanes and sessions left."""
    settings = CoreSettings.model_validate(
        {
            "queue": {"debounce_ms": 0},
            "reset": {"daily_hour": None},
            "maintenance": {
                "lane_idle_seconds": lane_idle_seconds,
                "check_interval_seconds": CHECK_INTERVAL_SECONDS,
                "idle_compaction_minutes": None,
                "nightly_hour": None,
            },
        }
    )
    vt = VirtualTime()
    samples: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'bench.db'}")
        provider = ScriptedProvider([Reply("ok")], repeat_last=True)
        core = Core.create(
            settings, db, provider=provider, system_prompt="bench", clock=vt.clock, sleep=vt.sleep
        )
        await core.start(maintenance=True)
        try:
            for i in range(1, sessions + 1):
                address = SessionAddress(f"local:user{i}", "default", "bench")
                await (await core.send(address, "hello", drafts=False)).text()
                provider.calls.clear()  # the double's call log is not the system under test
                await vt.advance(1.0)  # maintenance runs every CHECK_INTERVAL_SECONDS
                if i % SAMPLE_EVERY == 0:
                    gc.collect()
                    samples[i] = rss_mb()
            lanes = len(core.loaded_sessions())
            stored = len(await core.store.list())
        finally:
            await core.stop()
            await db.dispose()
    return samples, lanes, stored


async def run() -> dict[str, Any]:
    with timer() as elapsed:
        samples, lanes, stored = await _drive(SESSIONS, LANE_IDLE_SECONDS)
    seconds = elapsed()
    control, kept, _ = await _drive(CONTROL_SESSIONS, 1e9)
    per_kept = (control[CONTROL_SESSIONS] - control[SAMPLE_EVERY]) * 1024 / SAMPLE_EVERY
    first, last = samples[SAMPLE_EVERY], samples[SESSIONS]
    return {
        "sessions": SESSIONS,
        "rss_mb_at_1k": round(first, 1),
        "rss_mb_at_10k": round(last, 1),
        "rss_growth_1k_to_10k_mb": round(last - first, 1),
        "rss_ratio_10k_vs_1k": round(last / first, 3),
        "rss_mb_by_thousand": [round(samples[k], 1) for k in sorted(samples)],
        "lanes_in_memory_at_end": lanes,
        "sessions_stored": stored,
        "ms_per_session": round(seconds / SESSIONS * 1000, 2),
        "control_lanes_kept": kept,
        "control_kib_per_session_kept": round(per_kept, 1),
    }
