"""The store's hot path on a SQLite file: what one call costs on the event loop.

2,000 of each, timed one by one (wall µs, median and p90), three rounds (the median
round is reported):

* ``commit_us``: ``ConversationStore.commit`` of one message with a new state (append
  message, commit state: the turn's hot write).
* ``ensure_us``: ``ensure`` of a new conversation (insert unless present).
* ``get_us``: ``get`` of a conversation by id (the hot read).
* ``view_us``: ``view`` of a conversation of 20 messages (what a turn reads to build its
  request).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from beamclaw_core.loop.states import Idle
from beamclaw_core.messages import Message
from beamclaw_core.store import ConversationStore
from beamclaw_memory import Database

CALLS = 2_000
ROUNDS = 3


async def _timed(call: Callable[[int], Awaitable[object]]) -> tuple[float, float]:
    spent: list[float] = []
    for i in range(CALLS):
        started = time.perf_counter()
        await call(i)
        spent.append((time.perf_counter() - started) * 1e6)
    spent.sort()
    return statistics.median(spent), spent[int(len(spent) * 0.9)]


async def _round(path: Path) -> dict[str, tuple[float, float]]:
    db = Database(f"sqlite:///{path}")
    await db.migrate()
    store = ConversationStore(db)
    try:
        await store.ensure("c", agent_id="a", user_id="u", channel=None, now=0.0)
        message = [Message.user("hello there")]
        commit = await _timed(lambda i: store.commit("c", Idle(), message, now=float(i)))
        ensure = await _timed(
            lambda i: store.ensure(f"n{i}", agent_id="a", user_id="u", channel=None, now=1.0)
        )
        get = await _timed(lambda i: store.get(f"n{i}"))
        await store.ensure("v", agent_id="a", user_id="u", channel=None, now=0.0)
        await store.commit("v", Idle(), [Message.user(f"m{n}") for n in range(20)], now=1.0)
        view = await _timed(lambda _i: store.view("v"))
    finally:
        await db.dispose()
    return {"commit_us": commit, "ensure_us": ensure, "get_us": get, "view_us": view}


async def run() -> dict[str, Any]:
    rounds: list[dict[str, tuple[float, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(ROUNDS):
            rounds.append(await _round(Path(tmp) / f"round{n}.db"))
    out: dict[str, Any] = {}
    for name in rounds[0]:
        medians = sorted(r[name][0] for r in rounds)
        p90s = sorted(r[name][1] for r in rounds)
        out[name] = round(medians[len(medians) // 2], 1)
        out[name.replace("_us", "_p90_us")] = round(p90s[len(p90s) // 2], 1)
    return out


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(run()))
