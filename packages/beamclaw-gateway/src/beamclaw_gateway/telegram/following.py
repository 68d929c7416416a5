"""Messages handed to their session by an earlier run, followed to their answer.

Invariants: at most one follower per update; a follower answers its message once
(through :class:`~beamclaw_gateway.telegram.delivery.Delivery`), with the committed
answer, or :data:`~beamclaw_gateway.telegram.replies.RESTARTED` when the turn ended
without one; a message its session never took is forgotten (its update marked
``done``). Followers end with the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiogram.types import Message, Update

from beamclaw_core.api import Core
from beamclaw_gateway.telegram.delivery import Delivery
from beamclaw_gateway.telegram.recovery import follow_to_answer
from beamclaw_gateway.telegram.replies import RESTARTED
from beamclaw_gateway.telegram.running import Running
from beamclaw_gateway.telegram.updates import reply_target


class Followers:
    """The followers of one run (see the module invariants)."""

    def __init__(self, bot: Running, delivery: Delivery, core: Callable[[], Core]) -> None:
        self._bot = bot
        self._delivery = delivery
        self._core = core
        self._tasks: dict[int, asyncio.Task[None]] = {}

    def follow(
        self,
        update_id: int,
        session_id: str,
        payload: dict[str, object] | None,
        message: Message | None = None,
    ) -> None:
        """Follow the message of update ``update_id`` (given, or read from ``payload``)."""
        if message is None:
            message = Update.model_validate(payload).message
        if message is None or update_id in self._tasks:
            return
        found = message

        async def reply(text: str) -> None:
            await self._delivery.reply(found, text)

        async def forget() -> None:
            await self._bot.log.mark(update_id, "done")

        ref = reply_target(message.chat.id, message.message_id)
        follow = follow_to_answer(
            self._core, session_id, ref, reply=reply, forget=forget, restarted=RESTARTED
        )
        task = asyncio.get_running_loop().create_task(follow, name="telegram-follow")
        self._tasks[update_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(update_id, None))

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
