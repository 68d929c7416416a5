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

from beamclaw_core.conversation import TurnRequest
from beamclaw_core.sessions import SessionAddress
from beamclaw_scheduler.delivery import deliver
from beamclaw_scheduler.outbox import delivery_key, turn_ref
from beamclaw_scheduler.outbox_sender import DeliverySender
from beamclaw_scheduler.ports import SchedulerPorts
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


async def fire(
    job: Job, store: JobStore, ports: SchedulerPorts, outbox: DeliverySender | None = None
) -> Job | None:
    """Run ``job`` once (already claimed) and record how it went; the stored job after.
    With ``outbox`` the answer goes through it: its row is written before the turn is
    sent, so an answer committed before a crash is still delivered after the restart."""
    key = delivery_key(job.id, job.fire_count)
    session_id = session_of(job, ports)
    request = TurnRequest(
        address=SessionAddress(job.user_id, job.agent_id, CHANNEL),
        content=f"[Scheduled job {job.id} ({job.kind})]\n{job.prompt}",
        session_id=session_id,
        approval_mode=job.approval_mode,
        source_message_id=turn_ref(key),
        drafts=False,
        scheduled=True,
    )
    tokens, cost = 0, 0.0
    if outbox is not None:
        outbox.own(key)
    try:
        if outbox is not None:
            await outbox.outbox.expect(
                key,
                job_id=job.id,
                deliver_to=job.deliver_to,
                person=job.user_id,
                session_id=session_id,
            )
        turn = await ports.conversation.send(request)
        result = await turn.result()
        tokens, cost = result.usage.total_tokens, result.usage.cost_usd or 0.0
        if result.status != "completed":
            outcome = Outcome(False, f"turn {result.status}: {result.message}", tokens, cost)
            if outbox is not None:
                await outbox.outbox.skip(key, f"turn {result.status}")
        else:
            if outbox is not None:
                await outbox.hand(key, result.text)
            else:
                await deliver(ports, job.deliver_to, result.text, job.user_id)
            outcome = Outcome(True, None, tokens, cost)
    except Exception as exc:
        logger.warning("scheduled job {} failed: {}", job.id, exc)
        outcome = Outcome(False, f"{type(exc).__name__}: {exc}", tokens, cost)
    finally:
        if outbox is not None:
            outbox.release(key)
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
