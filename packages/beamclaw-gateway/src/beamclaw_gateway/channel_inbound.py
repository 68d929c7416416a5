"""What a person sends through a channel adapter becomes a turn, and its answer goes back.

The adapters (the ``/ws`` hub, Telegram) hand :class:`~beamclaw_core.channels.Inbound`
messages to :meth:`ChannelTurns.handle`. Each runs as a detached turn (a shutdown or a
crashing adapter never loses it): approvals it raises are asked on the same channel with
the channel's own controls (and can be answered from any front end), and its answer is
delivered to the message's ``reply_target`` when it ends, with the images the turn's
tools showed the model and the files they produced; a message whose attachments are refused gets the reason back. A
message id seen before on the channel is not run twice (unless its turn never started:
then it may be handed again). Before its turn starts, the sender's channel is remembered
(``remember``: the person's known channels, :mod:`~beamclaw_gateway.person_channels`),
best effort: a failure to remember is logged and never stops the turn. A channel that
shows turns as they run
(:class:`TurnWatcher`: Telegram's typing indicator and edited draft) sees every event of
the turns it started, and those turns stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from loguru import logger

from beamclaw_core.attachments import AttachmentError
from beamclaw_core.channels import ChannelError, ChannelRegistry, Inbound, Outbound
from beamclaw_core.conversation import LocalConversation, TurnRequest
from beamclaw_core.loop import ApprovalRequested, TurnEvent
from beamclaw_core.sessions import TurnResult
from beamclaw_gateway.recent_ids import RecentIds

DEDUPE_WINDOW = 4096
"""Message ids remembered per channel."""


@runtime_checkable
class TurnWatcher(Protocol):
    """A channel adapter that shows a turn while it runs."""

    async def watch(self, target: str, event: TurnEvent) -> None:
        """Every event of the turn started from ``target``, in order; must not block."""
        ...


class ChannelTurns:
    """The inbound sink the gateway gives its channel registry."""

    def __init__(
        self,
        channels: ChannelRegistry,
        conversation: LocalConversation,
        remember: Callable[[Inbound], Awaitable[None]] | None = None,
    ) -> None:
        self._channels = channels
        self._conversation = conversation
        self._remember = remember
        self._seen = RecentIds(DEDUPE_WINDOW)

    async def handle(self, inbound: Inbound) -> None:
        """Start ``inbound``'s turn; return once it is accepted (not when it ends)."""
        channel = inbound.channel
        adapter = self._channels.get(channel)
        watcher = adapter if isinstance(adapter, TurnWatcher) else None
        key = (channel, inbound.message_id)
        if inbound.message_id is not None and not self._seen.first_sighting(key):
            logger.info("channel {}: message {} seen before", channel, inbound.message_id)
            return
        if self._remember is not None:
            try:
                await self._remember(inbound)
            except Exception as exc:  # where to reach them later must not cost this turn
                logger.warning("channel {}: sender's channel not remembered: {}", channel, exc)

        async def on_event(event: TurnEvent) -> None:
            if watcher is not None:
                await watcher.watch(inbound.reply_target, event)
            if isinstance(event, ApprovalRequested):
                try:
                    await self._channels.ask_approval(channel, inbound.reply_target, event)
                except ChannelError as exc:
                    logger.warning("channel {}: approval prompt not shown: {}", channel, exc)

        async def on_done(result: TurnResult) -> None:
            text = result.message or "(no answer)"
            attachments = (*result.images, *result.files)
            await self._reply(inbound, Outbound(text, attachments=attachments))

        try:
            await self._conversation.send(
                TurnRequest(
                    address=inbound.address,
                    content=inbound.content,
                    session_id=inbound.session_id,
                    approval_mode="wait",
                    source_message_id=inbound.message_id,
                    drafts=watcher is not None,
                ),
                on_event=on_event,
                on_done=on_done,
            )
        except AttachmentError as exc:  # the person is told why, on their channel
            await self._reply(inbound, Outbound(f"Not sent: {exc}"))
        except BaseException:
            self._seen.forget(key)  # it never started: a retry (a recovering adapter) runs it
            raise

    async def _reply(self, inbound: Inbound, out: Outbound) -> None:
        try:
            await self._channels.deliver(inbound.channel, inbound.reply_target, out)
        except ChannelError as exc:
            logger.warning("channel {}: answer not delivered: {}", inbound.channel, exc)
