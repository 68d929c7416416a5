"""One fire of a job: the prompt into the agent's session through the ``Conversation``
port (marked scheduled), the whole turn awaited, the answer delivered through the
``ChannelRegistry``, the outcome stored — and the person told when the job pauses.

Invariant: every fire ends in exactly one :meth:`JobStore.record` (an exception of the
turn or of the delivery is an error outcome, never an escape), so errors are counted and
``max_errors`` consecutive ones pause the job.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from loguru import logger

from beamclaw_core.channels import ChannelError, Outbound
from beamclaw_core.conversation import TurnRequest
from beamclaw_core.sessions import SessionAddress
from beamclaw_scheduler.ports import SchedulerPorts
from beamclaw_scheduler.requests import LAST, SILENT, parse_target
from beamclaw_scheduler.store import Job, JobStore, Outcome

CHANNEL = "scheduler"
"""The channel a job's turn is attributed to."""


def session_of(job: Job, ports: SchedulerPorts) -> str:
    """The session ``job`` runs in."""
    if job.session_mode == "isolated":
        return f"sched-{job.id}"
    return job.session_id or ports.sessions.derive(
        SessionAddress(job.user_id, job.agent_id, CHANNEL)
    )


def local_day(now: float, timezone: str) -> str:
    """``YYYY-MM-DD`` of ``now`` in ``timezone`` (the day background spend counts on)."""
    return datetime.fromtimestamp(now, ZoneInfo(timezone)).date().isoformat()


async def deliver(ports: SchedulerPorts, deliver_to: str, text: str, person: str) -> None:
    """Send ``text`` to ``deliver_to`` (nothing for ``silent`` or empty text). ``last``
    is where ``person`` wrote from last (:attr:`SchedulerPorts.reach`): the newest known
    channel that takes the message (a channel that refuses it, a web page closed since,
    passes to the next); nothing when no channel is known; the last refusal raised when
    every one refuses."""
    if not text.strip() or deliver_to == SILENT:
        return
    if deliver_to != LAST:
        target = parse_target(deliver_to)
        if target is not None:
            await ports.channels.deliver(target[0], target[1], Outbound(text))
        return
    known = await ports.reach(person) if ports.reach is not None else []
    if not known:
        logger.info("nowhere known to reach {}: the answer stays in its session", person)
        return
    refused: ChannelError | None = None
    for where in known:
        target = parse_target(where)
        if target is None:
            continue
        try:
            await ports.channels.deliver(target[0], target[1], Outbound(text))
        except ChannelError as exc:
            logger.info("{} not reached on {}: {}", person, where, exc)
            refused = exc
        else:
            return
    if refused is not None:
        raise refused


async def fire(job: Job, store: JobStore, ports: SchedulerPorts) -> Job | None:
    """Run ``job`` once (already claimed) and record how it went; the stored job after."""
    request = TurnRequest(
        address=SessionAddress(job.user_id, job.agent_id, CHANNEL),
        content=f"[Scheduled job {job.id} ({job.kind})]\n{job.prompt}",
        session_id=session_of(job, ports),
        approval_mode=job.approval_mode,
        drafts=False,
        scheduled=True,
    )
    tokens, cost = 0, 0.0
    try:
        turn = await ports.conversation.send(request)
        result = await turn.result()
        tokens, cost = result.usage.total_tokens, result.usage.cost_usd or 0.0
        if result.status != "completed":
            outcome = Outcome(False, f"turn {result.status}: {result.message}", tokens, cost)
        else:
            await deliver(ports, job.deliver_to, result.text, job.user_id)
            outcome = Outcome(True, None, tokens, cost)
    except Exception as exc:
        logger.warning("scheduled job {} failed: {}", job.id, exc)
        outcome = Outcome(False, f"{type(exc).__name__}: {exc}", tokens, cost)
    day = local_day(ports.clock(), ports.timezone_of(job.agent_id))
    after = await store.record(job.id, outcome, day=day)
    if after is not None and after.status == "paused" and job.status == "active":
        await _tell_paused(after, ports)
    return after


async def _tell_paused(job: Job, ports: SchedulerPorts) -> None:
    text = (
        f"Your scheduled job {job.id} ({job.prompt[:60]!r}) failed {job.error_count} times "
        f"in a row and is paused. Last error: {job.last_error}. "
        f"Resume it with `beamclaw scheduler resume {job.id}`."
    )
    logger.warning("scheduled job {} paused after {} errors", job.id, job.error_count)
    try:
        await deliver(ports, job.deliver_to, text, job.user_id)
    except Exception as exc:
        logger.warning("could not tell the person job {} paused: {}", job.id, exc)
