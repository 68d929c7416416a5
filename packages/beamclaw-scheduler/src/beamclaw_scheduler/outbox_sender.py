"""Draining the outbox of jobs' answers (:class:`~.outbox.DeliveryOutbox`).

Invariants:

* A fire running here owns its row (:meth:`DeliverySender.own` … :meth:`release`): the
  sweep leaves it alone, so a live fire and the sweep never send one answer twice.
* Each sweep (at start, then every :data:`SWEEP_SECONDS` or when woken) first settles
  the ``awaiting`` rows no fire here owns and older than :data:`ORPHAN_GRACE_SECONDS`
  (their fire died with a process): the answer the turn committed in its session
  (:func:`~.answers.committed_answer`) makes the row ``pending``; none while the session
  is busy (the turn is queued or running) leaves it ``awaiting`` for the next sweep; none
  otherwise marks it ``skipped``. Then it sends every ``pending`` row that is due.
* A try that fails is counted and retried after :func:`~.outbox.backoff`; an unknown
  target, or :data:`~.outbox.MAX_ATTEMPTS` failures, marks the row ``failed`` and logs
  an error. Every try carries the row's key as its delivery id.
"""

from __future__ import annotations

import asyncio
import contextlib

from loguru import logger

from beamclaw_core.channels import UnknownTargetError
from beamclaw_core.sessions import UnknownSessionError
from beamclaw_scheduler.answers import committed_answer
from beamclaw_scheduler.delivery import deliver
from beamclaw_scheduler.outbox import Delivery, DeliveryOutbox
from beamclaw_scheduler.ports import SchedulerPorts

SWEEP_SECONDS = 5.0
PRUNE_SECONDS = 3_600.0
ORPHAN_GRACE_SECONDS = 5.0
"""An ``awaiting`` row younger than this may belong to a fire another node is starting."""


class DeliverySender:
    """Sends the outbox's rows (see the module invariants)."""

    def __init__(self, outbox: DeliveryOutbox, ports: SchedulerPorts) -> None:
        self.outbox = outbox
        self._ports = ports
        self._owned: set[str] = set()
        self._wake = asyncio.Event()
        self.sent = 0
        self.failed = 0
        self.last_error: str | None = None

    def own(self, key: str) -> None:
        """A fire here is running for ``key``: the sweep does not touch its row."""
        self._owned.add(key)

    def release(self, key: str) -> None:
        """The fire of ``key`` ended; a row it left ``awaiting`` or ``pending`` is the
        sweep's now."""
        self._owned.discard(key)
        self._wake.set()

    async def hand(self, key: str, text: str) -> None:
        """The fire's answer: stored ``pending``, then tried once now. Raises the channel's
        error when this try fails (the row stays for the sweep's retries)."""
        await self.outbox.ready(key, text)
        row = await self.outbox.get(key)
        if row is not None and row.state == "pending":
            await self._send(row, raise_errors=True)

    async def run(self) -> None:
        """Sweep until cancelled (and forget finished rows once an hour)."""
        pruned_at = float("-inf")
        while True:
            try:
                await self.sweep()
                if self._ports.clock() - pruned_at >= PRUNE_SECONDS:
                    pruned_at = self._ports.clock()
                    await self.outbox.prune()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                logger.exception("scheduler: delivery sweep failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SWEEP_SECONDS):
                    await self._wake.wait()

    async def sweep(self) -> None:
        """Settle orphaned ``awaiting`` rows, then send the due ``pending`` ones."""
        now = self._ports.clock()
        for row in await self.outbox.in_state("awaiting"):
            if row.key not in self._owned and now - row.created_at >= ORPHAN_GRACE_SECONDS:
                await self._settle(row)
        for row in await self.outbox.in_state("pending", due_by=self._ports.clock()):
            if row.key not in self._owned:
                await self._send(row, raise_errors=False)

    async def _settle(self, row: Delivery) -> None:
        try:
            page = await self._ports.conversation.history(row.session_id, limit=None)
        except UnknownSessionError:
            answer = None
        else:
            answer = committed_answer([e.message for e in page.entries], row.ref)
        if answer is not None:
            logger.info("scheduler: job {}'s answer found after a restart; sending", row.key)
            await self.outbox.ready(row.key, answer)
        elif not await self._ports.sessions.busy(row.session_id):
            await self.outbox.skip(row.key, "its turn committed no answer")

    async def _send(self, row: Delivery, *, raise_errors: bool) -> None:
        try:
            await deliver(
                self._ports, row.deliver_to, row.text or "", row.person, delivery_id=row.key
            )
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            self.last_error = error
            if isinstance(exc, UnknownTargetError):
                await self.outbox.give_up(row.key, error)
                state = "failed"
            else:
                state = await self.outbox.failed_attempt(row.key, error, row.attempts + 1)
            if state == "failed":
                self.failed += 1
                logger.error("scheduler: delivery {} failed for good: {}", row.key, error)
            else:
                logger.warning("scheduler: delivery {} not taken yet: {}", row.key, error)
            if raise_errors:
                raise
            return
        await self.outbox.sent(row.key)
        self.sent += 1
