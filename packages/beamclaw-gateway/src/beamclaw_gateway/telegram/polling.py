"""Long polling with a watchdog on inbound progress.

Why not aiogram's ``Dispatcher.start_polling``: it keeps its offset in memory and marks
an update consumed as soon as it is fetched, and it has no notion of a poll that hangs.
Here the offset comes from the persisted update log (an update is stored before the next
poll confirms it), and :func:`long_poll` runs the poll loop as a child task watched by a
timer: when no ``getUpdates`` has answered and no update was handled for twice the poll
timeout, the child is cancelled, the HTTP session is thrown away and the loop starts
again (``restarts`` in ``/health``). Outbound success does not count as progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from aiogram.methods import DeleteWebhook, GetUpdates
from aiogram.types import Update
from loguru import logger

from beamclaw_gateway.telegram.api import BotApi
from beamclaw_gateway.telegram.errors import TelegramSendError, TelegramTokenRejectedError
from beamclaw_gateway.telegram.status import ChannelStatus
from beamclaw_gateway.telegram.store import UpdateLog
from beamclaw_obs import Backoff

ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]


class LongPoll:
    """``getUpdates`` until cancelled; see the module docstring."""

    def __init__(
        self,
        api: BotApi,
        log: UpdateLog,
        status: ChannelStatus,
        handle: Callable[[Update], Awaitable[None]],
        *,
        timeout: int,
        on_start: Callable[[], Awaitable[None]] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api = api
        self._log = log
        self._status = status
        self._handle = handle
        self._timeout = timeout
        self._on_start = on_start
        self._monotonic = monotonic
        self._progress = monotonic()
        self._backoff = Backoff(initial=1.0, maximum=30.0)

    def _mark_progress(self) -> None:
        self._progress = self._monotonic()

    async def run(self) -> None:
        await self._api(DeleteWebhook(drop_pending_updates=False))
        stall = 2.0 * self._timeout
        while True:
            self._mark_progress()
            child = asyncio.get_running_loop().create_task(self._loop(), name="telegram-poll")
            try:
                while not child.done():
                    idle = self._monotonic() - self._progress
                    if idle > stall:
                        break
                    await asyncio.wait({child}, timeout=min(stall - idle, self._timeout / 2) + 0.01)
            except asyncio.CancelledError:
                child.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await child
                raise
            if child.done():
                child.result()  # the loop only ends by raising (a rejected token)
                continue
            child.cancel()
            with contextlib.suppress(asyncio.CancelledError, TelegramSendError):
                await child
            self._status.restarts += 1
            self._status.last_error = f"no poll progress for {stall:g} s; poll restarted"
            logger.warning("telegram: long poll stalled for {:g} s; restarting it", stall)
            await self._api.reset()

    async def _loop(self) -> None:
        if self._on_start is not None:
            await self._on_start()
        offset = await self._log.next_offset()
        failures = 0
        while True:
            self._status.state = "polling" if failures == 0 else "retrying"
            try:
                updates = await self._api(
                    GetUpdates(
                        offset=offset, timeout=self._timeout, allowed_updates=ALLOWED_UPDATES
                    ),
                    request_timeout=self._timeout + 10,
                    retry=False,
                )
            except TelegramTokenRejectedError:
                raise
            except TelegramSendError as exc:
                failures += 1
                self._status.errors += 1
                self._status.last_error = str(exc)
                delay = self._backoff.delay(failures)
                logger.warning("telegram: getUpdates failed ({}); again in {:.1f} s", exc, delay)
                await asyncio.sleep(delay)
                self._mark_progress()  # a failing poll is not a stalled one
                continue
            failures = 0
            self._status.last_poll_at = time.time()
            self._mark_progress()
            for update in updates:
                await self._handle(update)
                offset = update.update_id + 1
                self._mark_progress()
