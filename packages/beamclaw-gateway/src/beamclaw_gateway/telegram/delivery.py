"""Answers and proactive messages out of the bot: through the outbox, then attachments.

Invariants: every text goes through the outbox (:class:`~beamclaw_gateway.telegram.store.
Outbox`): a reply's ref is ``reply:<chat>:<message>``, so one message is answered once
however many times it is answered; the live draft of the message answered is closed and
its messages handed to the answer, which edits them into its own chunks. Attachments
(a tool's images and files) follow the text once Telegram took it
(:mod:`~beamclaw_gateway.telegram.attachments`: best effort, not persisted).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from aiogram.types import Message

from beamclaw_core.channels import Outbound, Receipt, UnknownTargetError
from beamclaw_gateway.telegram.attachments import send_attachments
from beamclaw_gateway.telegram.running import Running
from beamclaw_gateway.telegram.updates import CHANNEL, parse_target, reply_target
from beamclaw_tools import ContentPart, FilePart


class Delivery:
    """Sends what the bot says (see the module invariants)."""

    def __init__(self, bot: Running, *, max_file_bytes: int) -> None:
        self._bot = bot
        self._max_file_bytes = max_file_bytes

    async def reply(
        self,
        message: Message,
        text: str,
        attachments: Sequence[ContentPart | FilePart] = (),
    ) -> None:
        """Answer ``message`` with ``text`` (then ``attachments``, once the text went)."""
        bot = self._bot
        target = reply_target(message.chat.id, message.message_id)
        drafts = await bot.take_view(target)
        item = await bot.outbox.put(
            f"reply:{target}", message.chat.id, text, reply_to=message.message_id, drafts=drafts
        )
        if item is not None and await bot.outbound.flush(item) and attachments:
            await send_attachments(
                bot.sender, message.chat.id, attachments, max_file_bytes=self._max_file_bytes
            )

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        """``out`` to ``target`` (``<chat>``, or ``<chat>:<message>`` to answer one)."""
        bot = self._bot
        parsed = parse_target(target)
        if parsed is None:
            raise UnknownTargetError(CHANNEL, target)
        if parsed.message_id is not None:
            drafts = await bot.take_view(target)
            ref = f"reply:{target}"
        else:
            drafts, ref = (), f"out:{uuid.uuid4().hex}"
        item = await bot.outbox.put(
            ref, parsed.chat_id, out.text, reply_to=parsed.message_id, drafts=drafts
        )
        if item is None:
            return Receipt(CHANNEL, target, 0)
        ids = await bot.outbound.flush(item)
        if not ids:
            after = await bot.outbox.get(item.id)
            if after is not None and after.state == "failed":  # refused for good (no chat…)
                raise UnknownTargetError(CHANNEL, target)
            return Receipt(CHANNEL, target, 0)  # pending: sent once Telegram takes it
        ids += await send_attachments(
            bot.sender, parsed.chat_id, out.attachments, max_file_bytes=self._max_file_bytes
        )
        return Receipt(CHANNEL, target, 1 if ids else 0, tuple(str(i) for i in ids))
