"""The Telegram channel adapter: the bot's life under the channel registry.

Invariants (docs/telegram.md):

* Every update is stored before it is acted on and before its offset is confirmed; a
  redelivered one is dropped; what a previous run did not finish is taken up at start
  (:mod:`~beamclaw_gateway.telegram.inbound`, :mod:`~beamclaw_gateway.telegram.following`).
* Every answer goes through the outbox (:mod:`~beamclaw_gateway.telegram.delivery`,
  :class:`~beamclaw_gateway.telegram.outbound.OutboxSender`): sent once, never twice by
  two senders; what is pending at start is sent then.
* Drafts, typing indicators, queue notices and approval prompts are best effort and
  never persisted; the final answer replaces the draft (editing its messages).
* A stopping run tidies the chats for at most :data:`CLEAN_UP_SECONDS`.
* Cluster mode (docs/scale-out.md): every node runs the bot (webhooks, sends), but one
  elected node at a time long-polls (and takes up what a dead poller left) and one sweeps
  the outbox, each under a lease (:func:`~beamclaw_core.cluster.hold_duty`); the others
  show ``standby``.
* A bot token Telegram rejects ends the run with :class:`TelegramTokenRejectedError`
  (``token_rejected`` in ``/health``); the registry retries with backoff and cool-down,
  and nothing else in the gateway is affected.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiogram.methods import GetMe, SetMyCommands, SetWebhook
from aiogram.types import BotCommand, Update
from loguru import logger

from beamclaw_core.api import Core
from beamclaw_core.channels import (
    ChannelCaps,
    InboundSink,
    Outbound,
    Receipt,
    UnknownTargetError,
)
from beamclaw_core.cluster import hold_duty
from beamclaw_core.loop import ApprovalRequested, ApprovalResolved, TurnEvent
from beamclaw_gateway.agents import AgentCatalog
from beamclaw_gateway.settings import TelegramSettings
from beamclaw_gateway.telegram.api import BotApi
from beamclaw_gateway.telegram.delivery import Delivery
from beamclaw_gateway.telegram.errors import (
    TelegramChannelError,
    TelegramTokenRejectedError,
)
from beamclaw_gateway.telegram.following import Followers
from beamclaw_gateway.telegram.inbound import Updates
from beamclaw_gateway.telegram.node_updates import hold_node, sweep_gone_nodes
from beamclaw_gateway.telegram.outbound import CLUSTER_SETTLE_SECONDS, OutboxSender
from beamclaw_gateway.telegram.pairing import PairingRequest, PairingStore
from beamclaw_gateway.telegram.polling import ALLOWED_UPDATES, LongPoll
from beamclaw_gateway.telegram.prompts import ApprovalPrompts
from beamclaw_gateway.telegram.replies import APPROVED, COMMANDS
from beamclaw_gateway.telegram.running import Running
from beamclaw_gateway.telegram.send import TextSender
from beamclaw_gateway.telegram.status import ChannelStatus
from beamclaw_gateway.telegram.store import Outbox, UpdateLog
from beamclaw_gateway.telegram.updates import CHANNEL, account, parse_target
from beamclaw_memory import Database
from beamclaw_obs import ComponentHealth, HealthState, MissingSecretError, cancel_and_wait

CLEAN_UP_SECONDS = 5.0
"""How long a stopping run may spend tidying the chats (queue notices, stale drafts):
Telegram out of reach never holds the gateway's shutdown up longer."""


@dataclass(frozen=True, slots=True)
class _Run:
    """One run's parts: the bot, and what acts for it."""

    bot: Running
    delivery: Delivery
    followers: Followers
    updates: Updates


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
        self._api: BotApi | None = None
        self._run_parts: _Run | None = None
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
        try:
            await self._run(inbound)
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

    async def _run(self, sink: InboundSink) -> None:
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
        me = await api(GetMe())
        self.status.bot = f"@{me.username}" if me.username else str(me.id)
        run = await self._assemble(api, me.id, me.username, sink)
        await api(
            SetMyCommands(commands=[BotCommand(command=c, description=d) for c, d in COMMANDS])
        )
        link = self._core().cluster_link
        if link.shared:  # cluster mode: one node sweeps the shared outbox at a time
            sweep = hold_duty(link, f"telegram-outbox:{me.id}", run.bot.outbound.run)
            self._spawn(sweep, "telegram-outbox")
            self._spawn(run.bot.outbound.retry_own(), "telegram-outbox-own")
        else:
            self._spawn(run.bot.outbound.run(), "telegram-outbox")
        updates = run.updates
        if settings.mode == "long_poll":
            poll = LongPoll(
                api, run.bot.log, self.status, self.receive, timeout=settings.poll_timeout_seconds
            )
            self.ready.set()

            async def take_up_and_poll() -> None:
                await updates.take_up()  # what a dead poller left, too
                await poll.run()

            if link.shared:  # cluster mode: one elected node polls, the others stand by
                await hold_duty(
                    link, f"telegram-poller:{me.id}", take_up_and_poll, on_standby=self._standby
                )
            else:
                await take_up_and_poll()
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
            if link.shared:  # cluster mode: every node takes its own, one node the gone's
                log = run.bot.log
                sweep = hold_duty(
                    link,
                    f"telegram-updates:{me.id}",
                    lambda: sweep_gone_nodes(link, me.id, log, updates.take_up),
                )
                self._spawn(sweep, "telegram-gone-nodes")
                await hold_node(link, me.id, log, updates.take_up, self.ready.set)
                return
            self.ready.set()
            await updates.take_up()
            await asyncio.Event().wait()

    def _standby(self) -> None:
        self.status.state = "standby"

    async def _assemble(
        self, api: BotApi, bot_id: int, username: str | None, sink: InboundSink
    ) -> _Run:
        db = self._database()
        shared = self._core().cluster_link.shared
        node = self._core().cluster_link.node_id if shared else None
        log, outbox = UpdateLog(db, self._clock, node), Outbox(db, self._clock)
        pairing = PairingStore(db, self._clock)
        await pairing.load()
        await log.prune()
        sender = TextSender(api)
        bot = Running(
            api=api,
            sender=sender,
            log=log,
            outbox=outbox,
            pairing=pairing,
            prompts=ApprovalPrompts(sender, self._core),
            outbound=OutboxSender(
                outbox,
                sender,
                self.status,
                self._clock,
                settle_seconds=CLUSTER_SETTLE_SECONDS if shared else 0.0,
            ),
            bot_id=bot_id,
            username=username,
        )
        delivery = Delivery(bot, max_file_bytes=self.settings.max_file_bytes)
        followers = Followers(
            bot, delivery, self._core, interval=self.settings.edit_interval_seconds
        )
        updates = Updates(
            bot,
            self.settings,
            core=self._core,
            agents=self._agents,
            home=self._home,
            sink=sink,
            delivery=delivery,
            followers=followers,
            status=self.status,
            clock=self._clock,
        )
        self._run_parts = run = _Run(bot, delivery, followers, updates)
        return run

    async def _shutdown(self) -> None:
        await cancel_and_wait(list(self._background))
        self._background.clear()
        run, self._run_parts = self._run_parts, None
        if run is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLEAN_UP_SECONDS):
                    await self._clean_up(run)
        if self._api is not None:
            await self._api.close()
            self._api = None

    @staticmethod
    async def _clean_up(run: _Run) -> None:
        """End the followers and the live drafts (queue notices are deleted)."""
        await run.followers.close()
        for target in list(run.bot.views):
            with contextlib.suppress(TelegramChannelError):
                await run.bot.take_view(target)
        await run.bot.prompts.close()

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)

    def _require(self) -> _Run:
        if self._run_parts is None:
            raise TelegramChannelError("the Telegram channel is not running")
        return self._run_parts

    # ------------------------------------------------------------ inbound

    async def receive(self, update: Update) -> None:
        """Take one update from the long poll: store it, then act on it."""
        updates = self._require().updates
        if await updates.claim(update):
            await updates.process(update, recovering=False)

    async def receive_webhook(self, payload: dict[str, Any]) -> bool:
        """Take one update Telegram posted: stored when this returns (so the webhook may
        answer 200), acted on in the background. False: not an update (ignored)."""
        try:
            update = Update.model_validate(payload)
        except ValueError:
            return False
        updates = self._require().updates
        if await updates.claim(update):
            self._spawn(updates.process(update, recovering=False), "telegram-update")
        return True

    # ------------------------------------------------------------ outbound

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        run = self._run_parts
        if run is None or not self.ready.is_set():
            raise UnknownTargetError(CHANNEL, target)
        return await run.delivery.deliver(target, out)

    # ------------------------------------------------------------ turns and approvals

    async def watch(self, target: str, event: TurnEvent) -> None:
        """The gateway's turn seam: every event of a turn started from ``target``."""
        run = self._run_parts
        if run is None:
            return
        view = run.bot.views.get(target)
        if view is not None:
            view.feed(event)
        if isinstance(event, ApprovalResolved):
            run.bot.prompts.resolved(event)

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        parsed = parse_target(target)
        run = self._run_parts
        if parsed is None or run is None:
            raise UnknownTargetError(CHANNEL, target)
        await run.bot.prompts.ask(parsed.chat_id, parsed.message_id, request)

    # ------------------------------------------------------------ pairing (REST, CLI)

    @property
    def pairing(self) -> PairingStore:
        return self._require().bot.pairing

    async def approve_pairing(
        self, code: str, person: str | None, agent: str | None
    ) -> PairingRequest:
        """Let the code's user in, link the account to ``person``, tell the user."""
        bot = self._require().bot
        request, _user = await bot.pairing.approve(code, person, agent)
        if person:
            await self._core().identities.link(account(request.user_id), person)
        item = await bot.outbox.put(
            f"paired:{request.user_id}:{self._clock():.3f}",
            request.chat_id,
            APPROVED,
        )
        if item is not None:
            bot.outbound.wake()
        return request


def _log_failure(task: asyncio.Task[None]) -> None:
    """A background task that failed is logged (an update it held is taken up at the next
    start: its row is not ``done``)."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.opt(exception=exc).error("telegram: {} failed", task.get_name())
