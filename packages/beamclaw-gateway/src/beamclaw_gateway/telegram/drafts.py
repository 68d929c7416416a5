"""One turn's live view in a chat: a typing indicator at once, then the answer as a draft
message edited while it streams.

Invariants:

* ``typing`` is sent when the view starts and every :data:`TYPING_EVERY` seconds until
  the first draft text is shown (Telegram shows it for about five seconds).
* The draft first shows ``interval`` seconds after the view starts (a quick answer is
  sent whole), and edits are at least ``interval`` seconds apart (Telegram's per-chat limit is about one a
  second); the last state is always shown before the view is closed, unless the final
  answer replaces it.
* Past the length limit the draft continues in a new message; the earlier ones keep the
  chunks they show. :meth:`DraftView.close` hands the draft messages to the final answer,
  which edits them into its own chunks.
* A tool that runs shows as one progress line under the text; a queue notice is removed
  when work on the message starts.
* A failed edit or send never fails the turn: the draft is best effort, the final answer
  goes through the outbox.
* Closing lets a Bot API call under way finish: a draft message it sends is among those
  :meth:`DraftView.close` hands over, never left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from aiogram.methods import SendChatAction
from loguru import logger

from beamclaw_core.loop import (
    Accepted,
    Queued,
    Retrying,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnEvent,
)
from beamclaw_gateway.telegram.errors import TelegramChannelError
from beamclaw_gateway.telegram.render import LIMIT, Chunk, render
from beamclaw_gateway.telegram.send import TextSender

TYPING_EVERY = 4.0
QUEUE_NOTICE = "⏳ Working on something else, I'll get to this next…"


class DraftView:
    """The live view of one turn in ``chat_id`` (see the module invariants)."""

    def __init__(
        self,
        sender: TextSender,
        chat_id: int,
        reply_to: int | None,
        *,
        interval: float,
        limit: int = LIMIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sender = sender
        self.chat_id = chat_id
        self.reply_to = reply_to
        self._interval = interval
        self._limit = limit
        self._clock = clock
        self._parts: list[str] = []
        self._segment = 0
        """Index in ``_parts`` where the latest run of text (since another event) starts."""
        self._in_text = False
        self._progress: str | None = None
        self._shown: list[str] = []
        """The HTML each draft message shows, in order."""
        self.message_ids: list[int] = []
        self._queue_notice: int | None = None
        self._queued = False
        self._dirty = asyncio.Event()
        self._last_edit = float("-inf")
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        """Set by :meth:`close`: the loop ends even if a cancellation were lost."""
        self._inflight: asyncio.Task[None] | None = None
        """The Bot API call under way, which :meth:`close` lets finish (a message sent
        but not yet recorded would be left behind, an orphan draft)."""

    def start(self) -> None:
        self._last_edit = self._clock()  # a quick answer shows no draft at all
        self._task = asyncio.get_running_loop().create_task(self._run(), name="telegram-draft")

    # ------------------------------------------------------------ events (sync)

    def feed(self, event: TurnEvent) -> None:
        if isinstance(event, TextChunk):
            if not self._in_text:
                self._segment, self._in_text = len(self._parts), True
            self._parts.append(event.text)
        else:
            self._in_text = False
        if isinstance(event, Retrying) and event.discard_partial:
            del self._parts[self._segment :]
        elif isinstance(event, ToolStarted):
            self._progress = f"🔧 {event.tool}…"
        elif isinstance(event, ToolFinished):
            self._progress = None
        elif isinstance(event, Queued):
            self._queued = True
        elif isinstance(event, Accepted):
            self._queued = False
        self._dirty.set()

    @property
    def text(self) -> str:
        return "".join(self._parts)

    # ------------------------------------------------------------ the edit loop

    async def _run(self) -> None:
        next_typing = 0.0
        while not self._closing:
            now = self._clock()
            if not self.message_ids and now >= next_typing and not self._queued:
                await self._best_effort(self._typing())
                next_typing = now + TYPING_EVERY
            await self._best_effort(self._queue_notice_sync())
            wait = max(0.0, self._last_edit + self._interval - now)
            if self._dirty.is_set() and wait == 0.0:
                self._dirty.clear()
                await self._best_effort(self._show())
                self._last_edit = self._clock()
                continue
            timeout = TYPING_EVERY
            if not self.message_ids and not self._queued:
                timeout = max(0.05, next_typing - now)
            if self._dirty.is_set():  # changed, but the last edit is too recent: wait it out
                await asyncio.sleep(min(wait, timeout))
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._dirty.wait()

    async def _best_effort(self, work: Awaitable[None]) -> None:
        inflight = self._inflight = asyncio.ensure_future(work)
        try:
            await asyncio.shield(inflight)  # a cancelled loop leaves the call to finish
        except TelegramChannelError as exc:
            logger.debug("telegram draft in {}: {}", self.chat_id, exc)

    async def _settle_inflight(self) -> None:
        """Let the call the cancelled loop left finish (its failure is best effort)."""
        inflight, self._inflight = self._inflight, None
        if inflight is None:
            return
        await asyncio.wait([inflight])
        if not inflight.cancelled() and (exc := inflight.exception()) is not None:
            logger.debug("telegram draft in {}: {}", self.chat_id, exc)

    async def _typing(self) -> None:
        await self._sender.api(SendChatAction(chat_id=self.chat_id, action="typing"), retry=False)

    async def _queue_notice_sync(self) -> None:
        if self._queued and self._queue_notice is None:
            self._queue_notice = await self._sender.send(
                self.chat_id, Chunk(QUEUE_NOTICE, QUEUE_NOTICE), reply_to=self.reply_to
            )
        elif not self._queued and self._queue_notice is not None:
            notice, self._queue_notice = self._queue_notice, None
            await self._sender.delete(self.chat_id, notice)

    def _view(self) -> list[Chunk]:
        body = self.text.strip()
        if self._progress is not None:
            body = f"{body}\n\n_{self._progress}_" if body else f"_{self._progress}_"
        return render(body, self._limit) if body else []

    async def _show(self) -> None:
        chunks = self._view()
        for i, chunk in enumerate(chunks):
            if i < len(self.message_ids):
                if self._shown[i] != chunk.html:
                    await self._sender.edit(self.chat_id, self.message_ids[i], chunk)
                    self._shown[i] = chunk.html
            else:
                reply = self.reply_to if i == 0 else None
                self.message_ids.append(
                    await self._sender.send(self.chat_id, chunk, reply_to=reply)
                )
                self._shown.append(chunk.html)

    # ------------------------------------------------------------ end

    async def close(self) -> tuple[int, ...]:
        """Stop the view; returns the draft messages (for the final answer to edit)."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._settle_inflight()
        if self._queue_notice is not None:
            notice, self._queue_notice = self._queue_notice, None
            await self._sender.delete(self.chat_id, notice)
        return tuple(self.message_ids)
