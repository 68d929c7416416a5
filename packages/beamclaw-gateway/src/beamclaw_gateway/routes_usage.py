"""``GET /api/usage``: tokens and cost per agent and local day, from stored message usage.

Invariants: computed from the ``messages`` table (every LLM answer stores its ``usage``
and ``cost_usd``), so it outlives restarts and counts sub-agent turns under their own
agent; a day is the gateway's local calendar day (as the daily cost budgets count it);
a message without a cost adds tokens and nothing to ``cost_usd``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel

from beamclaw_core.store import UsageRow
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of

router = APIRouter(prefix="/api", tags=["api"], dependencies=[Depends(require_token)])


class UsageDay(BaseModel):
    """One agent's usage on one day."""

    date: str
    """The gateway's local calendar day, ``YYYY-MM-DD``."""
    agent_id: str
    calls: int
    """LLM answers stored that day."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0


class UsageReport(BaseModel):
    since: float
    """Epoch seconds of the first day's local midnight."""
    usage: list[UsageDay]
    """Newest day first, agents sorted within a day."""


_TOKENS = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens")


def local_date(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).astimezone().date().isoformat()


def usage_by_day(
    rows: Iterable[UsageRow], date_of: Callable[[float], str] = local_date
) -> list[UsageDay]:
    """Sum ``rows`` per (day, agent); newest day first, agents sorted within a day."""
    days: dict[tuple[str, str], UsageDay] = {}
    for row in rows:
        key = (date_of(row.created_at), row.agent_id)
        day = days.get(key)
        if day is None:
            day = days[key] = UsageDay(date=key[0], agent_id=key[1], calls=0)
        day.calls += 1
        for name in _TOKENS:
            value = row.usage.get(name)
            if isinstance(value, int):
                setattr(day, name, getattr(day, name) + value)
        if row.cost_usd is not None:
            day.cost_usd += row.cost_usd
    ordered = sorted(days.values(), key=lambda d: d.agent_id)
    ordered.sort(key=lambda d: d.date, reverse=True)
    for day in ordered:
        day.cost_usd = round(day.cost_usd, 6)
    return ordered


def days_start(days: int, now: float) -> float:
    """Local midnight ``days - 1`` days before ``now``'s day (``days = 1``: today)."""
    today = dt.datetime.fromtimestamp(now).astimezone()
    first = today.replace(hour=0, minute=0, second=0, microsecond=0) - dt.timedelta(days=days - 1)
    return first.timestamp()


@router.get("/usage", response_model=UsageReport, responses=error_responses(401, 422, 429))
async def usage(request: Request, days: int = Query(default=30, ge=1, le=366)) -> UsageReport:
    """Tokens and cost per agent and local day over the last ``days`` days (today
    included)."""
    since = days_start(days, time.time())
    rows = await services_of(request).core().store.usage_since(since)
    return UsageReport(since=since, usage=usage_by_day(rows))
