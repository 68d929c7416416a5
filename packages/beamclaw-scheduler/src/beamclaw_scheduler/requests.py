"""A job as a client asks for it (:class:`JobRequest`) and its validation into a
:class:`~beamclaw_scheduler.store.NewJob`, pure: ``now`` and what exists are passed in.

Every refusal is an :class:`~beamclaw_scheduler.errors.InvalidScheduleError` naming the
field and saying what would be accepted (the API answers 422 with it; the tool hands it
to the model, which can correct itself).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from beamclaw_scheduler.errors import InvalidScheduleError
from beamclaw_scheduler.settings import SchedulerSettings
from beamclaw_scheduler.specs import (
    Spec,
    next_fire,
    parse_at,
    parse_cron,
    parse_every,
    parse_random,
    zone,
)
from beamclaw_scheduler.store import NewJob, SessionMode

SILENT = "silent"
LAST = "last"
"""``deliver_to``: the channel the job's person wrote from last (the default)."""
MAX_PROMPT = 16_000


@dataclass(frozen=True, slots=True)
class JobRequest:
    """``POST /api/schedules``'s body (and the tool's and CLI's arguments)."""

    prompt: str
    every_seconds: int | None = None
    at: str | None = None
    cron: str | None = None
    random_in: dict[str, Any] | None = None
    timezone: str | None = None
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    session: SessionMode | None = None
    """``shared``: the person's conversation with the agent (or ``session_id``);
    ``isolated``: a conversation of the job's own. Default: shared when ``session_id``
    is given, else isolated."""
    deliver_to: str | None = None
    approval_mode: Literal["deny", "wait"] | None = None
    max_errors: int | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class Context:
    """What validation checks a request against."""

    now: float
    settings: SchedulerSettings
    default_agent: str
    default_user: str
    default_timezone: str
    agents: Collection[str]
    channels: Collection[str]


def parse_target(deliver_to: str) -> tuple[str, str] | None:
    """``"<channel>:<target>"`` as a pair; None for ``silent`` (and ``last``, which the
    executor resolves per fire)."""
    if deliver_to in (SILENT, LAST):
        return None
    channel, _, target = deliver_to.partition(":")
    return channel, target


def check_target(deliver_to: str, channels: Collection[str]) -> str:
    if deliver_to in (SILENT, LAST):
        return deliver_to
    channel, sep, target = deliver_to.partition(":")
    if not sep or not channel or not target:
        raise InvalidScheduleError(
            "deliver_to",
            f"deliver_to is 'last', 'silent' or '<channel>:<target>' (e.g. 'telegram:<chat>', "
            f"'webhook:<name>'), got {deliver_to!r}",
        )
    if channel not in channels:
        known = ", ".join(sorted(channels)) or "none"
        raise InvalidScheduleError(
            "deliver_to", f"no channel {channel!r} in this gateway (channels: {known})"
        )
    return deliver_to


def validate(request: JobRequest, ctx: Context, *, seed: str) -> NewJob:
    """The job ``request`` asks for, or :class:`InvalidScheduleError` (see module)."""
    prompt = request.prompt.strip()
    if not prompt or len(prompt) > MAX_PROMPT:
        raise InvalidScheduleError("prompt", f"prompt must be 1 to {MAX_PROMPT} characters")
    if request.extra:
        raise InvalidScheduleError(
            sorted(request.extra)[0], f"unknown field(s): {', '.join(sorted(request.extra))}"
        )
    agent = request.agent_id or ctx.default_agent
    if agent not in ctx.agents:
        raise InvalidScheduleError("agent_id", f"no agent {agent!r}")
    spec = _spec(request, ctx, seed)
    first = next_fire(spec, ctx.now)
    if first is None:
        raise InvalidScheduleError("at", "the job would never fire")
    mode: SessionMode = request.session or ("shared" if request.session_id else "isolated")
    if mode == "isolated" and request.session_id:
        raise InvalidScheduleError("session", "an isolated job runs in its own session_id")
    max_errors = request.max_errors or ctx.settings.max_errors
    if max_errors < 1:
        raise InvalidScheduleError("max_errors", "max_errors is at least 1")
    return NewJob(
        agent_id=agent,
        user_id=request.user_id or ctx.default_user,
        session_mode=mode,
        session_id=request.session_id,
        spec=spec,
        prompt=prompt,
        deliver_to=check_target(request.deliver_to or LAST, ctx.channels),
        approval_mode=request.approval_mode or ctx.settings.approval_mode,
        max_errors=max_errors,
        next_run_at=first,
    )


def _spec(request: JobRequest, ctx: Context, seed: str) -> Spec:
    given = [
        name
        for name in ("every_seconds", "at", "cron", "random_in")
        if getattr(request, name) is not None
    ]
    if len(given) != 1:
        what = "none" if not given else " and ".join(given)
        raise InvalidScheduleError(
            given[1] if len(given) > 1 else None,
            f"give exactly one of every_seconds, at, cron, random_in (got {what})",
        )
    tz = request.timezone or ctx.default_timezone
    zone(tz)
    if request.every_seconds is not None:
        return parse_every(request.every_seconds, ctx.settings.min_interval_seconds, ctx.now)
    if request.at is not None:
        return parse_at(request.at, ctx.now)
    if request.cron is not None:
        return parse_cron(request.cron, tz)
    return parse_random(request.random_in, tz, seed)
