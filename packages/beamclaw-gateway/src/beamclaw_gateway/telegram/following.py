"""Messages handed to their session by an earlier run, followed to their answer, and
shown like live ones while their turn runs.

A turn the core recovered at start (a restart while it ran, waited for an approval or
sat in the queue) has no live sender any more: nobody watches its events and nobody
asks its approvals. The follower of its message does both, from the session's event
stream (:meth:`~beamclaw_core.api.Core.subscribe`): a typing indicator and the streamed
draft (:class:`~beamclaw_gateway.telegram.drafts.DraftView`), an approval the turn
asks (again) as a prompt with inline buttons, and the images and files its tools
produced after the answer (those of tools that finished before the restart are gone).

Invariants: at most one follower per update; a follower answers its message once
(through :class:`~beamclaw_gateway.telegram.delivery.Delivery`), with the committed
answer, or :data:`~beamclaw_gateway.telegram.replies.RESTARTED` when the turn ended
without one; a message its session never took is forgotten (its update marked
``done``, its draft deleted). An approval is prompted once per request, whether it was
asked before the follower subscribed (read from the pending approvals) or after. The
draft shows the session's turn until it ends; a later turn of the session while the
message still waits (it was queued behind) starts a fresh draft. Followers end with the
run; the live view is best effort.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from aiogram.types import Message, Update
from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.errors import BeamclawCoreError
from beamclaw_core.loop import ApprovalRequested, ApprovalResolved, ToolFinished, TurnEvent
from beamclaw_gateway.telegram.delivery import Delivery
from beamclaw_gateway.telegram.drafts import DraftView
from beamclaw_gateway.telegram.errors import TelegramChannelError
from beamclaw_gateway.telegram.recovery import follow_to_answer, trace
from beamclaw_gateway.telegram.replies import RESTARTED
from beamclaw_gateway.telegram.running import Running
from beamclaw_gateway.telegram.updates import reply_target
from beamclaw_obs import cancel_and_wait
from beamclaw_tools import FilePart, ImagePart


class Followers:
    """The followers of one run (see the module invariants)."""

    def __init__(
        self,
        bot: Running,
        delivery: Delivery,
        core: Callable[[], Core],
        *,
        interval: float,
    ) -> None:
        self._bot = bot
        self._delivery = delivery
        self._core = core
        self._interval = interval
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
        work = self._follow(update_id, session_id, message)
        task = asyncio.get_running_loop().create_task(work, name="telegram-follow")
        self._tasks[update_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(update_id, None))
        task.add_done_callback(_log_failure)

    async def close(self) -> None:
        await cancel_and_wait(list(self._tasks.values()))
        self._tasks.clear()

    async def _follow(self, update_id: int, session_id: str, message: Message) -> None:
        target = reply_target(message.chat.id, message.message_id)
        kept: list[ImagePart | FilePart] = []  # what the turn's tools produced, to send

        async def reply(text: str) -> None:
            parts = () if text == RESTARTED else tuple(kept)
            await self._delivery.reply(message, text, parts)

        async def forget() -> None:
            await self._bot.log.mark(update_id, "done")

        ended = asyncio.Event()  # a turn of the session ended: look for the answer now
        live = asyncio.get_running_loop().create_task(
            self._show(session_id, message, target, ended, kept), name="telegram-follow-view"
        )
        try:
            await follow_to_answer(
                self._core,
                session_id,
                target,
                reply=reply,
                forget=forget,
                restarted=RESTARTED,
                wake=ended,
            )
        finally:
            live.cancel()
            await asyncio.gather(live, return_exceptions=True)
            # the answer took the view and its drafts; what is left is stale (forgotten)
            for draft in await self._bot.take_view(target):
                await self._bot.sender.delete(message.chat.id, draft)

    async def _show(
        self,
        session_id: str,
        message: Message,
        target: str,
        ended: asyncio.Event,
        kept: list[ImagePart | FilePart],
    ) -> None:
        """Show the session's turn in the chat until cancelled (see the module invariants);
        ``kept`` collects the images and files of its tools."""
        core = self._core()
        try:
            events = await core.subscribe(session_id)
        except BeamclawCoreError as exc:
            logger.info("telegram: no live view of recovered {}: {}", session_id, exc)
            return
        try:
            view = self._start_view(message, target)
            for pending in await core.pending_approvals(session_id):
                request = ApprovalRequested(
                    session_id, None, pending.request_id, pending.tool, dict(pending.args)
                )
                await self._ask(message, request)
            async for event in events:
                await self._on_event(message, event, view)
                if isinstance(event, ToolFinished):
                    kept.extend((*event.images, *event.files))
                if not event.terminal:
                    continue
                ended.set()
                view = None
                if await trace(core, session_id, target) == "waiting":  # not its turn yet
                    kept.clear()
                    view = await self._fresh_view(message, target)
        finally:
            events.close()

    async def _on_event(self, message: Message, event: TurnEvent, view: DraftView | None) -> None:
        if view is not None:
            view.feed(event)
        if isinstance(event, ApprovalRequested):
            await self._ask(message, event)
        elif isinstance(event, ApprovalResolved):
            self._bot.prompts.resolved(event)

    async def _ask(self, message: Message, request: ApprovalRequested) -> None:
        with contextlib.suppress(TelegramChannelError):
            await self._bot.prompts.ask(message.chat.id, message.message_id, request)

    def _start_view(self, message: Message, target: str) -> DraftView | None:
        bot = self._bot
        if target in bot.views:
            return None
        view = DraftView(bot.sender, message.chat.id, message.message_id, interval=self._interval)
        bot.views[target] = view
        view.start()
        return view

    async def _fresh_view(self, message: Message, target: str) -> DraftView | None:
        """Another turn of the session ended before the message's own: a fresh view (the
        old draft deleted)."""
        for draft in await self._bot.take_view(target):
            await self._bot.sender.delete(message.chat.id, draft)
        return self._start_view(message, target)


def _log_failure(task: asyncio.Task[None]) -> None:
    """A follower that failed is logged (its update is not ``done``: the next start
    follows it again)."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.opt(exception=exc).error("telegram: following a message failed")
