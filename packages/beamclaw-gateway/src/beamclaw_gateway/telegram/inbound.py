"""Updates into the bot: stored first, then answered, paired, refused or handed on.

Invariants (docs/telegram.md): every update is stored in the
:class:`~beamclaw_gateway.telegram.store.UpdateLog` before it is acted on (a redelivered
one is dropped); an update ends ``done`` once acted on, or ``handed`` with its session
once its message is durable there. At start the updates not ``done`` are taken up again:
one never handed is acted on again, one handed is followed to its answer
(:mod:`~beamclaw_gateway.telegram.following`), never handed twice (the session is
traced first).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aiogram.types import Message, Update
from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.channels import Inbound, InboundSink
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.workspace import agent_dir
from beamclaw_gateway.agents import AgentCatalog
from beamclaw_gateway.settings import TelegramSettings
from beamclaw_gateway.telegram.access import Sender, choose_agent, decide
from beamclaw_gateway.telegram.delivery import Delivery
from beamclaw_gateway.telegram.drafts import DraftView
from beamclaw_gateway.telegram.errors import TelegramChannelError, TelegramTokenRejectedError
from beamclaw_gateway.telegram.following import Followers
from beamclaw_gateway.telegram.media import INBOX, MediaError, message_content
from beamclaw_gateway.telegram.recovery import trace
from beamclaw_gateway.telegram.replies import (
    GREETING,
    REFUSED,
    UNSUPPORTED,
    is_start,
    pairing_offer,
)
from beamclaw_gateway.telegram.running import Running
from beamclaw_gateway.telegram.status import ChannelStatus
from beamclaw_gateway.telegram.store import StoredUpdate
from beamclaw_gateway.telegram.updates import (
    CHANNEL,
    account,
    group_account,
    reply_target,
    sender_of,
    update_chat,
)


class Updates:
    """Acts on the updates of one run (see the module invariants)."""

    def __init__(
        self,
        bot: Running,
        settings: TelegramSettings,
        *,
        core: Callable[[], Core],
        agents: AgentCatalog,
        home: Path,
        sink: InboundSink,
        delivery: Delivery,
        followers: Followers,
        status: ChannelStatus,
        clock: Callable[[], float],
    ) -> None:
        self._bot = bot
        self._settings = settings
        self._core = core
        self._agents = agents
        self._home = home
        self._sink = sink
        self._delivery = delivery
        self._followers = followers
        self._status = status
        self._clock = clock

    async def claim(self, update: Update) -> bool:
        """Store ``update``; False when it was stored before (skip it)."""
        chat_id, message_id = update_chat(update)
        payload = update.model_dump(mode="json", exclude_none=True)
        if not await self._bot.log.claim(update.update_id, payload, chat_id, message_id):
            logger.info("telegram: update {} seen before; skipped", update.update_id)
            return False
        self._status.updates += 1
        self._status.last_update_at = self._clock()
        return True

    async def take_up(self, stored_updates: list[StoredUpdate] | None = None) -> None:
        """Act on the updates a previous run stored and did not finish (or on
        ``stored_updates``, e.g. a dead node's)."""
        if stored_updates is None:
            stored_updates = await self._bot.log.unfinished()
        for stored in stored_updates:
            if stored.state == "handed" and stored.session_id is not None:
                self._followers.follow(stored.update_id, stored.session_id, stored.payload)
                continue
            update = Update.model_validate(stored.payload)
            await self.process(update, recovering=True)

    async def process(self, update: Update, *, recovering: bool) -> None:
        """Act on a stored update (``recovering``: an earlier run may have handed it)."""
        try:
            if update.callback_query is not None:
                await self._bot.prompts.pressed(update.callback_query)
            elif update.message is not None:
                await self._on_message(update.update_id, update.message, recovering)
                return
            elif update.edited_message is not None:
                logger.info(
                    "telegram: edit of message {} ignored", update.edited_message.message_id
                )
        except TelegramTokenRejectedError:
            raise
        except (TelegramChannelError, OSError) as exc:
            logger.warning("telegram: update {} failed: {}", update.update_id, exc)
        await self._bot.log.mark(update.update_id, "done")

    async def _on_message(self, update_id: int, message: Message, recovering: bool) -> None:
        bot = self._bot
        sender = sender_of(message, bot.username, bot.bot_id)
        if sender is None:
            await bot.log.mark(update_id, "done")
            return
        settings = self._settings
        access = decide(
            sender,
            dm_policy=settings.dm_policy,
            allowlist=settings.allowlist,
            approved=bot.pairing.approved(sender.user_id) is not None,
            group_policy=settings.group_policy,
            group_allowlist=settings.group_allowlist,
        )
        if access == "ignore":
            await bot.log.mark(update_id, "done")
        elif access == "refuse":
            await self._delivery.reply(message, REFUSED)
        elif access == "pair":
            await self._offer_pairing(message, sender)
        else:
            await self._answer(update_id, message, sender, recovering)

    async def _offer_pairing(self, message: Message, sender: Sender) -> None:
        user = message.from_user
        name = user.full_name if user is not None else None
        request = await self._bot.pairing.request(
            sender.user_id, sender.chat_id, sender.username, name
        )
        await self._delivery.reply(message, pairing_offer(request))

    async def _answer(
        self, update_id: int, message: Message, sender: Sender, recovering: bool
    ) -> None:
        bot = self._bot
        if is_start(message.text or message.caption or ""):
            await self._delivery.reply(message, GREETING)
            return
        agent = self._agent_for(sender)
        try:
            content = await message_content(
                bot.api,
                message,
                self._settings,
                folder=agent_dir(agent, self._home) / INBOX,
                bot_username=bot.username,
            )
        except MediaError as exc:
            await self._delivery.reply(message, exc.reply)
            return
        if content is None:
            await self._delivery.reply(message, UNSUPPORTED)
            return
        user = account(sender.user_id) if sender.private else group_account(sender.chat_id)
        address = SessionAddress(user, agent, CHANNEL)
        session_id = self._core().session_id(address)
        target = reply_target(message.chat.id, message.message_id)
        if recovering:
            found = await trace(self._core(), session_id, target)
            if found != "absent":
                await bot.log.mark(update_id, "handed", session_id)
                self._followers.follow(update_id, session_id, None, message)
                return
        view = DraftView(
            bot.sender,
            message.chat.id,
            message.message_id,
            interval=self._settings.edit_interval_seconds,
        )
        bot.views[target] = view
        view.start()
        try:
            await self._sink(Inbound(CHANNEL, address, content, target, message_id=target))
        except BaseException:
            await bot.take_view(target)
            raise
        await bot.log.mark(update_id, "handed", session_id)

    def _agent_for(self, sender: Sender) -> str:
        own = account(sender.user_id)
        approved = self._bot.pairing.approved(sender.user_id)
        name = choose_agent(
            approved_agent=approved.agent if approved is not None else None,
            person=self._core().identities.person_of(own),
            account=own,
            agents=self._settings.agents,
            channel_agent=self._settings.agent,
        )
        resolved = self._agents.resolve(name)
        if resolved is None:
            logger.warning("telegram: agent {!r} does not exist; using the default", name)
            return self._agents.default_agent
        return resolved
