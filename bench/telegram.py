"""Telegram end to end: messages per second through the real channel and a fake Bot API.

The gateway (in this process, uvicorn on loopback, the Telegram channel on, long
polling) talks over real HTTP to :class:`~beamclaw_gateway.fake_telegram.FakeBotApi`
(in this process too) and to the 20 ms fake LLM upstream (``_served``, its own process).
A message counts as answered when the bot's message in that chat shows the whole answer
(after its streaming edits). Reported, medians over ``ROUNDS``:

* ``burst_msgs_per_s``: ``BURST`` users each send one message at once; messages / time
  until every chat shows its answer;
* ``one_chat_p50_ms``: one user sending ``SEQUENTIAL`` messages, each after the previous
  answer is shown: push to answer shown (polling, turn, sendMessage and edits);
* ``direct_p50_ms``: the upstream's own answer time in the same run (the floor).

The fake Bot API's own work is charged to this process too: the figures are a floor for
what the channel sustains, not a ceiling.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from typing import Any

from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_gateway.settings import TelegramSettings
from beamclaw_gateway.testing import live_gateway
from beamclaw_obs import Secret
from bench._drive import QUICK, batch, client
from bench._served import fake_upstream
from bench.gateway import bench_config
from bench.load import BODY

ROUNDS = 3 if not QUICK else 1
BURST = 100 if not QUICK else 30
SEQUENTIAL = 20 if not QUICK else 5
ANSWER = "The quick brown fox jumps over the lazy dog."


def _answered(tg: FakeBotApi, chat: int, count: int) -> bool:
    shown = [m for m in tg.messages(chat) if not m.deleted and m.plain_text == ANSWER]
    return len(shown) >= count


async def _measure(upstream: str) -> dict[str, Any]:
    config = bench_config(upstream)
    rounds: dict[str, list[float]] = {}
    async with FakeBotApi(token="123456:BENCH") as tg:
        config.gateway.channels.telegram = TelegramSettings.model_validate(
            {
                "enabled": True,
                "token": Secret.model_validate(tg.token),
                "api_base_url": tg.base_url,
                "dm_policy": "open",
                "poll_timeout_seconds": 1,
            }
        )
        async with live_gateway(None, config) as gw, client() as http:
            channel = gw.app.state.services.telegram
            await tg.wait_for(lambda _tg: channel.ready.is_set(), 30)
            chat = 1_000_000
            for r in range(ROUNDS + 1):  # round 0 warms up
                direct = await batch(http, f"{upstream}/chat/completions", BODY, SEQUENTIAL, 1)
                one: list[float] = []
                chat += 1
                for i in range(SEQUENTIAL):
                    start = time.perf_counter()
                    tg.push_message(chat_id=chat, from_id=chat, text=f"hello {i}")
                    await tg.wait_for(lambda t, c=chat, n=i + 1: _answered(t, c, n), 60)
                    one.append(time.perf_counter() - start)
                chats = list(range(chat + 1, chat + 1 + BURST))
                chat += BURST
                start = time.perf_counter()
                for c in chats:
                    tg.push_message(chat_id=c, from_id=c, text="hello")
                await tg.wait_for(lambda t, cs=chats: all(_answered(t, c, 1) for c in cs), 300)
                burst = time.perf_counter() - start
                if not r:
                    continue
                rounds.setdefault("burst_msgs_per_s", []).append(BURST / burst)
                rounds.setdefault("one_chat_p50_ms", []).append(statistics.median(one) * 1000)
                rounds.setdefault("direct_p50_ms", []).append(
                    statistics.median(direct.latencies) * 1000
                )
    out: dict[str, Any] = {k: round(statistics.median(v), 2) for k, v in rounds.items()}
    spread = rounds["burst_msgs_per_s"]
    out["burst_msgs_per_s_rounds"] = f"{min(spread):.1f}..{max(spread):.1f}"
    out.update(burst=BURST, sequential=SEQUENTIAL, rounds=ROUNDS)
    return out


def run() -> dict[str, Any]:
    """Run the benchmark in a throwaway ``BEAMCLAW_HOME``; returns the measurements."""
    saved = os.environ.get("BEAMCLAW_HOME")
    with fake_upstream() as upstream, tempfile.TemporaryDirectory() as home:
        os.environ["BEAMCLAW_HOME"] = home
        try:
            return asyncio.run(_measure(upstream))
        finally:
            if saved is None:
                os.environ.pop("BEAMCLAW_HOME", None)
            else:
                os.environ["BEAMCLAW_HOME"] = saved
