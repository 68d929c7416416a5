"""Sending the outbox: each message once, from where it got.

Invariants: one send at a time (a lock), and the row is read again under the lock, so
the start-up sweep, the periodic sweep and a live delivery never send the same message
twice. Chunks are sent (or edited into the draft messages the row names) in order and
``sent_chunks`` is stored after each one Telegram accepted. A draft message that cannot
be edited any more (deleted) is replaced by a new message. A 400 that plain text cannot
fix marks the row ``failed``; any other failure leaves it ``pending`` for the next sweep
(every :data:`SWEEP_SECONDS`, or at once when woken), for up to
:data:`GIVE_UP_SECONDS`. In cluster mode one node sweeps, and only rows older than
:data:`CLUSTER_SETTLE_SECONDS` (another node may be sending a younger one live); a row
this node failed to send while younger than half of that is tried again by this node
(:meth:`OutboxSender.retry_own`, after :data:`OWN_RETRY_FIRST_SECONDS`, then doubling),
so the two never try the same row at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from loguru import logger

from beamclaw_gateway.telegram.errors import (
    TelegramBadRequestError,
    TelegramSendError,
    TelegramTokenRejectedError,
)
from beamclaw_gateway.telegram.render import Chunk, render
from beamclaw_gateway.telegram.send import TextSender
from beamclaw_gateway.telegram.status import ChannelStatus
from beamclaw_gateway.telegram.store import Outbox, OutboxItem

SWEEP_SECONDS = 10.0
CLUSTER_SETTLE_SECONDS = 30.0
"""In cluster mode the sweep (on one node) leaves younger rows alone: the node that put
one is sending it live, and the other nodes' locks are not this one's."""
OWN_RETRY_FIRST_SECONDS = 0.5
"""Cluster mode: how soon a row this node failed to send is tried again (then doubling,
up to :data:`SWEEP_SECONDS`)."""
GIVE_UP_SECONDS = 86_400.0
"""A message Telegram has not taken for a day (the person blocked the bot, the chat is
gone) is marked ``failed`` instead of being tried forever."""


class OutboxSender:
    """Sends :class:`Outbox` rows (see the module invariants)."""

    def __init__(
        self,
        outbox: Outbox,
        sender: TextSender,
        status: ChannelStatus,
        clock: Callable[[], float] = time.time,
        *,
        settle_seconds: float = 0.0,
    ) -> None:
        self.outbox = outbox
        self._settle = settle_seconds
        self._clock = clock
        self._sender = sender
        self._status = status
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._own: dict[int, float] = {}
        """Cluster mode: rows this node failed to send young, with when they were put."""
        self._own_wake = asyncio.Event()

    def wake(self) -> None:
        """Sweep now (a message was put in the outbox by someone who does not send it)."""
        self._wake.set()

    async def run(self) -> None:
        """Sweep the outbox until cancelled."""
        while True:
            pending = await self.outbox.pending()
            self._status.outbox_pending = len(pending)
            settled = self._clock() - self._settle
            for item in pending:
                if item.created_at <= settled:
                    await self.flush(item)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SWEEP_SECONDS):
                    await self._wake.wait()

    async def retry_own(self) -> None:
        """Cluster mode, on every node, until cancelled: try again the rows this node
        failed to send while the sweep leaves them to it (younger than half the settle
        time); older ones are the sweeping node's."""
        delay = OWN_RETRY_FIRST_SECONDS
        while True:
            if not self._own:
                self._own_wake.clear()
                await self._own_wake.wait()
                delay = OWN_RETRY_FIRST_SECONDS
            await asyncio.sleep(delay)
            for item_id, created_at in list(self._own.items()):
                del self._own[item_id]
                if self._clock() - created_at < self._settle / 2:
                    item = await self.outbox.get(item_id)
                    if item is not None:
                        await self.flush(item)  # failing again: tracked again
            delay = min(delay * 2, SWEEP_SECONDS)

    async def flush(self, item: OutboxItem) -> tuple[int, ...]:
        """Send ``item`` from where it got; the ids of its messages (none when it is still
        pending or failed before any chunk)."""
        async with self._lock:
            fresh = await self.outbox.get(item.id)
            if fresh is None or fresh.state != "pending":
                return fresh.message_ids if fresh is not None else ()
            chunks = render(fresh.text)
            ids = list(fresh.message_ids)
            try:
                for i in range(fresh.sent_chunks, len(chunks)):
                    if i < len(ids):
                        ids[i] = await self._edit_or_send(fresh, ids[i], chunks[i])
                    else:
                        reply = fresh.reply_to if i == 0 else None
                        ids.append(
                            await self._sender.send(fresh.chat_id, chunks[i], reply_to=reply)
                        )
                    await self.outbox.progress(fresh.id, i + 1, tuple(ids))
                for extra in ids[len(chunks) :]:
                    await self._sender.delete(fresh.chat_id, extra)
            except TelegramTokenRejectedError:
                raise
            except TelegramBadRequestError as exc:
                await self.outbox.finish(fresh.id, "failed", str(exc))
                logger.warning("telegram: message {} refused: {}", fresh.ref, exc)
                return tuple(ids[: fresh.sent_chunks])
            except TelegramSendError as exc:
                if self._clock() - fresh.created_at > GIVE_UP_SECONDS:
                    await self.outbox.finish(fresh.id, "failed", f"gave up: {exc}")
                    logger.error("telegram: message {} given up: {}", fresh.ref, exc)
                    return ()
                await self.outbox.failed_attempt(fresh.id, str(exc))
                if self._clock() - fresh.created_at < self._settle / 2:
                    self._own[fresh.id] = fresh.created_at
                    self._own_wake.set()
                self._status.errors += 1
                self._status.last_error = str(exc)
                logger.warning("telegram: message {} not sent yet: {}", fresh.ref, exc)
                return ()
            await self.outbox.finish(fresh.id, "sent", None)
            return tuple(ids[: len(chunks)])

    async def _edit_or_send(self, item: OutboxItem, message_id: int, chunk: Chunk) -> int:
        try:
            await self._sender.edit(item.chat_id, message_id, chunk)
        except TelegramBadRequestError:  # the draft is gone (deleted) or not editable
            return await self._sender.send(item.chat_id, chunk)
        return message_id
