"""``GET /api/usage`` (tokens and cost per agent and day), message counts in
``GET /api/sessions`` and the owner's sessions in ``GET /api/status``: what the web page
shows, from the store."""

from __future__ import annotations

import httpx

from beamclaw_core.messages import Usage
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.store import UsageRow
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_gateway.routes_usage import days_start, usage_by_day

from .conftest import live_gateway

CHAT = {"model": "beamclaw/default", "messages": [{"role": "user", "content": "note this"}]}


def _row(agent: str, at: float, total: int, cost: float | None) -> UsageRow:
    usage = {"prompt_tokens": total - 1, "completion_tokens": 1, "total_tokens": total}
    return UsageRow(agent, at, usage, cost)


def test_usage_is_summed_per_day_and_agent_newest_day_first() -> None:
    rows = [
        _row("ops", 10.0, 5, 0.5),
        _row("default", 20.0, 7, None),
        _row("default", 30.0, 3, 0.25),
        _row("default", 100.0, 4, 0.125),
    ]
    days = usage_by_day(rows, date_of=lambda t: "2026-01-02" if t >= 100 else "2026-01-01")
    assert [(d.date, d.agent_id, d.calls, d.total_tokens, d.cost_usd) for d in days] == [
        ("2026-01-02", "default", 1, 4, 0.125),
        ("2026-01-01", "default", 2, 10, 0.25),
        ("2026-01-01", "ops", 1, 5, 0.5),
    ]
    assert days[1].prompt_tokens == 8
    assert days[1].completion_tokens == 2


def test_days_start_is_a_local_midnight_days_back() -> None:
    now = 1_800_000_000.0
    today = days_start(1, now)
    assert today <= now < today + 25 * 3600
    assert 6 * 23 * 3600 <= today - days_start(7, now) <= 6 * 25 * 3600


async def test_usage_counts_and_owner_sessions_through_the_api() -> None:
    spent = Usage(prompt_tokens=100, completion_tokens=20, total_tokens=120, cost_usd=0.002)
    provider = ScriptedProvider(
        [CallTool("think", {"thought": "t"}), Reply("Done.", usage=spent), Reply("Again.")]
    )
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        await c.post("/v1/chat/completions", json=CHAT, headers={"X-Session-Id": "s1"})
        await c.post("/v1/chat/completions", json=CHAT)
        usage = (await c.get("/api/usage")).json()
        sessions = (await c.get("/api/sessions")).json()["sessions"]
        status = (await c.get("/api/status")).json()
        invalid = await c.get("/api/usage?days=0")
        owner_session = gw.runtime.core.session_id(SessionAddress(status["owner"], "default", "ws"))
    [day] = usage["usage"]
    assert day["agent_id"] == "default"
    assert day["calls"] == 3  # the tool call, "Done." and "Again."
    assert day["cost_usd"] == 0.002
    assert day["total_tokens"] >= 120
    assert usage["since"] <= sessions[0]["last_activity_at"]
    counts = {s["session_id"]: s["message_count"] for s in sessions}
    assert counts["s1"] == 4  # user, assistant (tool call), tool, assistant
    assert status["owner"].startswith("local:")
    assert status["owner_sessions"] == {"default": owner_session}
    assert counts[owner_session] == 2  # a request naming no user is the owner's
    assert invalid.status_code == 422
