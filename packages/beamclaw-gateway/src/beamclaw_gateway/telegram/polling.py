"""Long polling with a watchdog on inbound progress.

Why not aiogram's ``Dispatcher.start_polling``: it keeps its offset in memory and counts
an update consumed as soon as it is fetched, and nothing notices a poll that hangs. Here
the offset comes from the persisted update log (an update is stored before the next poll
confirms it), and every ``getUpdates`` must answer within twice the poll timeout: one
that does not (a connection that died silently) is abandoned, the HTTP session is thrown
away and polling goes on with a fresh one (``watchdog_restarts`` in ``/health``). Only a
poll answering counts as progress, never a message sent. The watchdog never cancels the
handling of an update: an update is handed to its session whole or, after a crash, taken
up from the log at the next start.
"""

from __future__ import annotations

import asyncio
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
    ) -> None:
        self._api = api
        self._log = log
        self._status = status
        self._handle = handle
        self._timeout = timeout
        self._backoff = Backoff(initial=1.0, maximum=30.0)

    async def run(self) -> None:
        await self._api(DeleteWebhook(drop_pending_updates=False))
        offset = await self._log.next_offset()
        stall = 2.0 * self._timeout
        failures = 0
        while True:
            self._status.state = "polling" if failures == 0 else "retrying"
            method = GetUpdates(
                offset=offset, timeout=self._timeout, allowed_updates=ALLOWED_UPDATES
            )
            try:
                async with asyncio.timeout(stall):
                    updates = await self._api(method, request_timeout=int(stall) + 5, retry=False)
            except TimeoutError:
                self._status.restarts += 1
                self._status.last_error = f"no poll progress for {stall:g} s; poll restarted"
                logger.warning("telegram: long poll stalled for {:g} s; restarting it", stall)
                await self._api.reset()
                continue
            except TelegramTokenRejectedError:
                raise
            except TelegramSendError as exc:
                failures += 1
                self._status.errors += 1
                self._status.last_error = str(exc)
                delay = self._backoff.delay(failures)
                logger.warning("telegram: getUpdates failed ({}); again in {:.1f} s", exc, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            self._status.last_poll_at = time.time()
            for update in updates:
                await self._handle(update)
                offset = update.update_id + 1
