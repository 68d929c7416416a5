"""The Telegram channel adapter: the bot's life under the channel registry.

Invariants (docs/telegram.md):

* Every update is stored (:class:`~beamclaw_gateway.telegram.store.UpdateLog`) before
  it is acted on and before its offset is confirmed; a redelivered one is dropped. At
  start updates not ``done`` are taken up again:
  one that never became durable in its session is handed again, one whose turn is still
  running or answered is followed to its answer, which goes through the outbox.
* Every answer goes through the outbox (:class:`~beamclaw_gateway.telegram.outbound.
  OutboxSender`): sent once, never twice by two senders; what is pending at start is sent
  then.
* Drafts, typing indicators, queue notices and approval prompts are best effort and
  never persisted; the final answer replaces the draft (editing its messages).
* A bot token Telegram rejects ends the run with :class:`TelegramTokenRejectedError`
  (``token_rejected`` in ``/health``); the registry retries with backoff and cool-down,
  and nothing else in the gateway is affected.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from aiogram.methods import (
    GetMe,
    SetMyCommands,
    SetWebhook,
)
from aiogram.types import BotCommand, Message, Update
from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.channels import (
    ChannelCaps,
    Inbound,
    InboundSink,
    Outbound,
    Receipt,
    UnknownTargetError,
)
from beamclaw_core.loop import ApprovalRequested, ApprovalResolved, TurnEvent
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.workspace import agent_dir
from beamclaw_gateway.agents import AgentCatalog
from beamclaw_gateway.settings import TelegramSettings
from beamclaw_gateway.telegram.access import Sender, choose_agent, decide
from beamclaw_gateway.telegram.api import BotApi
from beamclaw_gateway.telegram.drafts import DraftView
from beamclaw_gateway.telegram.errors import (
    TelegramChannelError,
    TelegramTokenRejectedError,
)
from beamclaw_gateway.telegram.media import INBOX, MediaError, message_content
from beamclaw_gateway.telegram.outbound import OutboxSender
from beamclaw_gateway.telegram.pairing import PairingRequest, PairingStore
from beamclaw_gateway.telegram.polling import ALLOWED_UPDATES, LongPoll
from beamclaw_gateway.telegram.prompts import ApprovalPrompts
from beamclaw_gateway.telegram.recovery import follow_to_answer, trace
from beamclaw_gateway.telegram.replies import (
    APPROVED,
    COMMANDS,
    GREETING,
    REFUSED,
    RESTARTED,
    UNSUPPORTED,
    is_start,
    pairing_offer,
)
from beamclaw_gateway.telegram.send import TextSender
from beamclaw_gateway.telegram.status import ChannelStatus
from beamclaw_gateway.telegram.store import Outbox, OutboxItem, UpdateLog
from beamclaw_gateway.telegram.updates import (
    CHANNEL,
    account,
    group_account,
    parse_target,
    reply_target,
    sender_of,
    update_chat,
)
from beamclaw_memory import Database
from beamclaw_obs import ComponentHealth, HealthState, MissingSecretError
from beamclaw_tools import ImagePart

T = TypeVar("T")


class TelegramChannel:
    """The ``telegram`` channel (see the module invariants)."""

    def __init__(
        self,
        settings: TelegramSettings,
        *,
        core: Callable[[], Core],
        database: Callable[[], Database],
        agents: AgentCatalog,
        home: Path,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self._core = core
        self._database = database
        self._agents = agents
        self._home = home
        self._clock = clock
        self.status = ChannelStatus(settings.mode)
        self._prompts: ApprovalPrompts | None = None
        self._api: BotApi | None = None
        self._sender: TextSender | None = None
        self._log: UpdateLog | None = None
        self._outbox: Outbox | None = None
        self._pairing: PairingStore | None = None
        self._inbound: InboundSink | None = None
        self._bot_id: int | None = None
        self._views: dict[str, DraftView] = {}
        self._outbound: OutboxSender | None = None
        self._followers: dict[int, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.ready = asyncio.Event()
        """Set while the run can take updates (the webhook route waits for it)."""

    # ------------------------------------------------------------ ChannelAdapter

    @property
    def name(self) -> str:
        return CHANNEL

    @property
    def capabilities(self) -> ChannelCaps:
        return ChannelCaps(edits=True, buttons=True, images=True, files=True, max_length=4096)

    def health(self) -> ComponentHealth:
        data = self.status.as_dict()
        if self.status.state in ("token_rejected", "token_missing"):
            return ComponentHealth(HealthState.DOWN, self.status.last_error or "", data)
        if self.status.state == "retrying":
            return ComponentHealth(HealthState.DEGRADED, self.status.last_error or "", data)
        return ComponentHealth(HealthState.UP, data=data)

    async def run(self, inbound: InboundSink) -> None:
        self._inbound = inbound
        try:
            await self._run()
        except TelegramTokenRejectedError as exc:
            self.status.state = "token_rejected"
            self.status.last_error = str(exc)
            logger.error("telegram: {}", exc)
            raise
        except asyncio.CancelledError:
            self.status.state = "stopped"
            raise
        finally:
            self.ready.clear()
            await self._shutdown()

    async def _run(self) -> None:
        settings = self.settings
        if settings.token is None:
            raise TelegramChannelError("[gateway.channels.telegram] token is not set")
        try:
            token = settings.token.resolve("the Telegram bot token")
        except MissingSecretError as exc:
            self.status.state = "token_missing"
            self.status.last_error = str(exc)
            raise
        self.status.state = "starting"
        self._api = api = BotApi(token, settings.api_base_url)
        self._sender = TextSender(api)
        self._prompts = ApprovalPrompts(self._sender, self._core)
        me = await api(GetMe())
        self._bot_id = me.id
        self.status.bot = f"@{me.username}" if me.username else str(me.id)
        db = self._database()
        self._log = UpdateLog(db, self._clock)
        self._outbox = Outbox(db, self._clock)
        self._pairing = PairingStore(db, self._clock)
        await self._pairing.load()
        await self._log.prune()
        await api(
            SetMyCommands(commands=[BotCommand(command=c, description=d) for c, d in COMMANDS])
        )
        self._outbound = OutboxSender(self._outbox, self._sender, self.status, self._clock)
        self._spawn(self._outbound.run(), "telegram-outbox")
        if settings.mode == "long_poll":
            poll = LongPoll(
                api, self._log, self.status, self.receive, timeout=settings.poll_timeout_seconds
            )
            self.ready.set()
            await self._take_up()
            await poll.run()
        else:
            assert settings.webhook_url is not None and settings.webhook_secret is not None
            await api(
                SetWebhook(
                    url=settings.webhook_url,
                    secret_token=settings.webhook_secret.resolve("the Telegram webhook secret"),
                    allowed_updates=ALLOWED_UPDATES,
                )
            )
            self.status.state = "webhook"
            self.ready.set()
            await self._take_up()
            await asyncio.Event().wait()

    async def _shutdown(self) -> None:
        tasks = [*self._background, *self._followers.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._background.clear()
        self._followers.clear()
        for view in list(self._views.values()):
            with contextlib.suppress(TelegramChannelError):
                await view.close()
        self._views.clear()
        if self._prompts is not None:
            await self._prompts.close()
        if self._api is not None:
            await self._api.close()
            self._api = None

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)

    # ------------------------------------------------------------ inbound

    async def receive(self, update: Update) -> None:
        """Take one update from the long poll: store it, then act on it."""
        if await self._claim(update):
            await self._process(update, recovering=False)

    async def receive_webhook(self, payload: dict[str, Any]) -> bool:
        """Take one update Telegram posted: stored when this returns (so the webhook may
        answer 200), acted on in the background. False: not an update (ignored)."""
        try:
            update = Update.model_validate(payload)
        except ValueError:
            return False
        if await self._claim(update):
            self._spawn(self._process(update, recovering=False), "telegram-update")
        return True

    async def _claim(self, update: Update) -> bool:
        log = self._require(self._log)
        chat_id, message_id = update_chat(update)
        payload = update.model_dump(mode="json", exclude_none=True)
        if not await log.claim(update.update_id, payload, chat_id, message_id):
            logger.info("telegram: update {} seen before; skipped", update.update_id)
            return False
        self.status.updates += 1
        self.status.last_update_at = self._clock()
        return True

    async def _take_up(self) -> None:
        """Act on the updates a previous run stored and did not finish."""
        for stored in await self._require(self._log).unfinished():
            if stored.state == "handed" and stored.session_id is not None:
                self._follow(stored.update_id, stored.session_id, stored.payload)
                continue
            update = Update.model_validate(stored.payload)
            await self._process(update, recovering=True)

    async def _process(self, update: Update, *, recovering: bool) -> None:
        log = self._require(self._log)
        try:
            if update.callback_query is not None:
                await self._require(self._prompts).pressed(update.callback_query)
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
        await log.mark(update.update_id, "done")

    async def _on_message(self, update_id: int, message: Message, recovering: bool) -> None:
        sender = sender_of(message, self._bot_username, self._bot_id)
        log = self._require(self._log)
        if sender is None:
            await log.mark(update_id, "done")
            return
        pairing = self._require(self._pairing)
        settings = self.settings
        access = decide(
            sender,
            dm_policy=settings.dm_policy,
            allowlist=settings.allowlist,
            approved=pairing.approved(sender.user_id) is not None,
            group_policy=settings.group_policy,
            group_allowlist=settings.group_allowlist,
        )
        if access == "ignore":
            await log.mark(update_id, "done")
        elif access == "refuse":
            await self._reply(message, REFUSED)
        elif access == "pair":
            await self._offer_pairing(message, sender)
        else:
            await self._answer(update_id, message, sender, recovering)

    async def _offer_pairing(self, message: Message, sender: Sender) -> None:
        user = message.from_user
        name = user.full_name if user is not None else None
        request = await self._require(self._pairing).request(
            sender.user_id, sender.chat_id, sender.username, name
        )
        text = pairing_offer(request)
        await self._reply(message, text)

    async def _answer(
        self, update_id: int, message: Message, sender: Sender, recovering: bool
    ) -> None:
        if is_start(message.text or message.caption or ""):
            await self._reply(message, GREETING)
            return
        agent = self._agent_for(sender)
        try:
            content = await message_content(
                self._require(self._api),
                message,
                self.settings,
                folder=agent_dir(agent, self._home) / INBOX,
                bot_username=self._bot_username,
            )
        except MediaError as exc:
            await self._reply(message, exc.reply)
            return
        if content is None:
            await self._reply(message, UNSUPPORTED)
            return
        user = account(sender.user_id) if sender.private else group_account(sender.chat_id)
        address = SessionAddress(user, agent, CHANNEL)
        session_id = self._core().session_id(address)
        target = reply_target(message.chat.id, message.message_id)
        log = self._require(self._log)
        if recovering:
            found = await trace(self._core(), session_id, target)
            if found != "absent":
                await log.mark(update_id, "handed", session_id)
                self._follow(update_id, session_id, None, message)
                return
        view = DraftView(
            self._require(self._sender),
            message.chat.id,
            message.message_id,
            interval=self.settings.edit_interval_seconds,
        )
        self._views[target] = view
        view.start()
        try:
            await self._require(self._inbound)(
                Inbound(CHANNEL, address, content, target, message_id=target)
            )
        except BaseException:
            self._views.pop(target, None)
            await view.close()
            raise
        await log.mark(update_id, "handed", session_id)

    @property
    def _bot_username(self) -> str | None:
        bot = self.status.bot
        return bot[1:] if bot and bot.startswith("@") else None

    def _agent_for(self, sender: Sender) -> str:
        own = account(sender.user_id)
        approved = self._require(self._pairing).approved(sender.user_id)
        name = choose_agent(
            approved_agent=approved.agent if approved is not None else None,
            person=self._core().identities.person_of(own),
            account=own,
            agents=self.settings.agents,
            channel_agent=self.settings.agent,
        )
        resolved = self._agents.resolve(name)
        if resolved is None:
            logger.warning("telegram: agent {!r} does not exist; using the default", name)
            return self._agents.default_agent
        return resolved

    # ------------------------------------------------------------ recovery

    def _follow(
        self,
        update_id: int,
        session_id: str,
        payload: dict[str, object] | None,
        message: Message | None = None,
    ) -> None:
        if message is None:
            update = Update.model_validate(payload)
            message = update.message
        if message is None:
            return
        found = message

        async def reply(text: str) -> None:
            await self._reply(found, text)

        async def forget() -> None:
            await self._require(self._log).mark(update_id, "done")

        ref = reply_target(message.chat.id, message.message_id)
        follow = follow_to_answer(
            self._core, session_id, ref, reply=reply, forget=forget, restarted=RESTARTED
        )
        task = asyncio.get_running_loop().create_task(follow, name="telegram-follow")
        self._followers[update_id] = task
        task.add_done_callback(lambda _t: self._followers.pop(update_id, None))

    # ------------------------------------------------------------ outbound

    async def _reply(self, message: Message, text: str) -> None:
        """Answer ``message`` (through the outbox; marks its update done)."""
        target = reply_target(message.chat.id, message.message_id)
        view = self._views.pop(target, None)
        drafts = await view.close() if view is not None else ()
        item = await self._require(self._outbox).put(
            f"reply:{target}", message.chat.id, text, reply_to=message.message_id, drafts=drafts
        )
        if item is not None:
            await self._outbound_flush(item)

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        parsed = parse_target(target)
        outbox = self._outbox
        if parsed is None or outbox is None or not self.ready.is_set():
            raise UnknownTargetError(CHANNEL, target)
        if parsed.message_id is not None:
            view = self._views.pop(target, None)
            drafts = await view.close() if view is not None else ()
            ref = f"reply:{target}"
        else:
            drafts, ref = (), f"out:{uuid.uuid4().hex}"
        item = await outbox.put(
            ref, parsed.chat_id, out.text, reply_to=parsed.message_id, drafts=drafts
        )
        if item is None:
            return Receipt(CHANNEL, target, 0)
        ids = await self._outbound_flush(item)
        if not ids:
            after = await outbox.get(item.id)
            if after is not None and after.state == "failed":  # refused for good (no chat…)
                raise UnknownTargetError(CHANNEL, target)
            return Receipt(CHANNEL, target, 0)  # pending: sent once Telegram takes it
        for part in out.attachments:
            if isinstance(part, ImagePart):
                ids += (await self._require(self._sender).photo(parsed.chat_id, part),)
        return Receipt(CHANNEL, target, 1 if ids else 0, tuple(str(i) for i in ids))

    # ------------------------------------------------------------ turns and approvals

    async def watch(self, target: str, event: TurnEvent) -> None:
        """The gateway's turn seam: every event of a turn started from ``target``."""
        view = self._views.get(target)
        if view is not None:
            view.feed(event)
        if isinstance(event, ApprovalResolved) and self._prompts is not None:
            self._prompts.resolved(event)

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        parsed = parse_target(target)
        if parsed is None or self._prompts is None:
            raise UnknownTargetError(CHANNEL, target)
        await self._prompts.ask(parsed.chat_id, parsed.message_id, request)

    # ------------------------------------------------------------ pairing (REST, CLI)

    @property
    def pairing(self) -> PairingStore:
        return self._require(self._pairing)

    async def approve_pairing(
        self, code: str, person: str | None, agent: str | None
    ) -> PairingRequest:
        """Let the code's user in, link the account to ``person``, tell the user."""
        request, _user = await self.pairing.approve(code, person, agent)
        if person:
            await self._core().identities.link(account(request.user_id), person)
        outbox = self._require(self._outbox)
        item = await outbox.put(
            f"paired:{request.user_id}:{self._clock():.3f}",
            request.chat_id,
            APPROVED,
        )
        if item is not None:
            self._require(self._outbound).wake()
        return request

    async def _outbound_flush(self, item: OutboxItem) -> tuple[int, ...]:
        return await self._require(self._outbound).flush(item)

    @staticmethod
    def _require(part: T | None) -> T:
        if part is None:
            raise TelegramChannelError("the Telegram channel is not running")
        return part


def _log_failure(task: asyncio.Task[None]) -> None:
    """A background task that failed is logged (an update it held is taken up at the next
    start: its row is not ``done``)."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.opt(exception=exc).error("telegram: {} failed", task.get_name())
