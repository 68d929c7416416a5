"""Sending one answer of the scheduler to where it goes (``deliver_to``).

Invariant: nothing is sent for ``silent`` or an empty text; ``delivery_id`` rides on the
:class:`~beamclaw_core.channels.Outbound` unchanged, so every retry of one delivery
carries the same id.
"""

from __future__ import annotations

from loguru import logger

from beamclaw_core.channels import ChannelError, Outbound
from beamclaw_scheduler.ports import SchedulerPorts
from beamclaw_scheduler.requests import LAST, SILENT, parse_target


async def deliver(
    ports: SchedulerPorts,
    deliver_to: str,
    text: str,
    person: str,
    *,
    delivery_id: str | None = None,
) -> None:
    """Send ``text`` to ``deliver_to`` (nothing for ``silent`` or empty text). ``last``
    is where ``person`` wrote from last (:attr:`SchedulerPorts.reach`): the newest known
    channel that takes the message (a channel that refuses it, a web page closed since,
    passes to the next); nothing when no channel is known; the last refusal raised when
    every one refuses."""
    if not text.strip() or deliver_to == SILENT:
        return
    out = Outbound(text, delivery_id=delivery_id)
    if deliver_to != LAST:
        target = parse_target(deliver_to)
        if target is not None:
            await ports.channels.deliver(target[0], target[1], out)
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
            await ports.channels.deliver(target[0], target[1], out)
        except ChannelError as exc:
            logger.info("{} not reached on {}: {}", person, where, exc)
            refused = exc
        else:
            return
    if refused is not None:
        raise refused
