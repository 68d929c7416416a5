"""What the routes share: auth, rate limiter, agents, channels, conversations, stores.

Built with the app (nothing here touches the database until first used), bound to the
:class:`GatewayRuntime`, so the routes work whether the runtime was started by the app's
lifespan or before it (``server.serve``, tests).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from starlette.requests import Request

from beamclaw_core.api import Core
from beamclaw_core.channels import ChannelRegistry, Inbound
from beamclaw_core.conversation import LocalConversation
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.store.ids import local_user_id
from beamclaw_gateway.a2a_store import A2AStore
from beamclaw_gateway.agents import AgentCatalog
from beamclaw_gateway.auth import TokenGuard
from beamclaw_gateway.channel_inbound import ChannelTurns
from beamclaw_gateway.errors import GatewayNotStartedError
from beamclaw_gateway.idempotency import IdempotencyStore
from beamclaw_gateway.person_channels import PersonChannels
from beamclaw_gateway.ratelimit import RateLimiter
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.settings import GatewaySettings
from beamclaw_gateway.settle import CommittedAnswers
from beamclaw_gateway.webhook_channel import WebhookChannel
from beamclaw_gateway.ws import WebSocketHub
from beamclaw_memory import Database

if TYPE_CHECKING:
    from beamclaw_gateway.telegram import TelegramChannel
    from beamclaw_scheduler import Scheduler  # imported when [scheduler] enabled


class GatewayServices:
    """The gateway's edge services around one runtime."""

    def __init__(self, runtime: GatewayRuntime) -> None:
        self.runtime = runtime
        self.settings: GatewaySettings = runtime.config.gateway
        self.auth = TokenGuard(self.settings.http)
        self.limiter = RateLimiter(self.settings.rate_limit)
        self.owner = local_user_id()
        """Who a request or frame that names no user is: the person running the gateway,
        as the TUI and CLI on this machine speak (``local:<login>``), so with
        ``session_sharing = "shared"`` the API, ``/ws`` and the TUI share one history."""
        self.agents = AgentCatalog(runtime.config.core.default_agent, runtime.home)
        self.channels = ChannelRegistry()
        """Every channel adapter (the ``/ws`` hub, Telegram), run under supervision."""
        self.ws_hub = WebSocketHub(self.settings.ws)
        self.channels.register(self.ws_hub)
        self.webhooks = WebhookChannel(self.settings.outbound_webhooks)
        """``webhook:<name>``: the ``[gateway.outbound_webhooks.<name>]`` URLs."""
        self.channels.register(self.webhooks)
        self.telegram: TelegramChannel | None = None
        """The Telegram channel when ``[gateway.channels.telegram] enabled`` (its module,
        and aiogram, are imported only then)."""
        if self.settings.channels.telegram.enabled:
            from beamclaw_gateway.telegram import TelegramChannel

            self.telegram = TelegramChannel(
                self.settings.channels.telegram,
                core=self.core,
                database=self.database,
                agents=self.agents,
                home=runtime.home,
            )
            self.channels.register(self.telegram)
        self.scheduler: Scheduler | None = None
        """Jobs and heartbeats; None until started, and with ``[scheduler] enabled`` off."""
        self.conversation = LocalConversation(self.core)
        """The one way every front end reaches conversations (detached turns)."""
        self.channel_turns = ChannelTurns(self.channels, self.conversation, self._remember)
        self._idempotency: IdempotencyStore | None = None
        self._a2a: A2AStore | None = None
        self._person_channels: PersonChannels | None = None
        self._register_health()

    def core(self) -> Core:
        """The running core; :class:`GatewayNotStartedError` (503) before start."""
        return self.runtime.core

    def approval_mode(self, agent_id: str) -> Literal["deny", "wait"]:
        """How an API turn of ``agent_id`` treats an approval: ``[agents.<id>]
        approval_mode``, else ``[gateway.api] approval_mode``."""
        agent = self.runtime.config.agents.get(agent_id)
        if agent is not None and agent.approval_mode is not None:
            return agent.approval_mode
        return self.settings.api.approval_mode

    def database(self) -> Database:
        if self.runtime.database is None:
            raise GatewayNotStartedError("the gateway runtime is not started")
        return self.runtime.database

    @property
    def idempotency(self) -> IdempotencyStore:
        """The idempotency store of the current database: a new gateway instance (a new
        owner id) each time the runtime starts on a database."""
        db = self.database()
        if self._idempotency is None or self._idempotency.db is not db:
            if self._idempotency is not None:
                self._idempotency.detach()
            api = self.settings.api
            self._idempotency = IdempotencyStore(
                db,
                api.idempotency_ttl_seconds,
                lease_seconds=api.idempotency_lease_seconds,
                settle=CommittedAnswers(self.core),
            )
        return self._idempotency

    @property
    def a2a(self) -> A2AStore:
        db = self.database()
        if self._a2a is None or self._a2a.db is not db:
            self._a2a = A2AStore(db)
        return self._a2a

    @property
    def person_channels(self) -> PersonChannels:
        """Each person's known channels, on the current database."""
        db = self.database()
        if self._person_channels is None or self._person_channels.db is not db:
            self._person_channels = PersonChannels(db, time.time)
        return self._person_channels

    async def _remember(self, inbound: Inbound) -> None:
        person = self.core().person(inbound.address).user_id
        await self.person_channels.seen(person, inbound.channel, inbound.reply_target)

    async def reach(self, user_id: str) -> list[str]:
        """Where to reach ``user_id`` (or the person it is linked to), best first: the
        scheduler's ``deliver_to = "last"``."""
        address = SessionAddress(user_id, self.runtime.config.core.default_agent)
        return await self.person_channels.reach(self.core().person(address).user_id)

    def _register_health(self) -> None:
        health = self.runtime.health
        health.register("channels", self.channels.health)
        health.register("rate_limit", self.limiter.health)

    async def start(self) -> None:
        """Once the runtime started: settle idempotency keys that a dead gateway left,
        then run the channel adapters."""
        await self.idempotency.sweep()
        self.channels.start(self.channel_turns.handle)
        if self.runtime.config.scheduler.enabled:
            self._start_scheduler()

    def _start_scheduler(self) -> None:
        from beamclaw_gateway.scheduling import SchedulerTool, build_scheduler, cap_fetches

        runtime = self.runtime
        self.scheduler = build_scheduler(
            runtime.config,
            self.database(),
            self.core,
            self.conversation,
            self.channels,
            self.agents,
            home=runtime.home,
            owner=self.owner,
            reach=self.reach,
        )
        assert runtime.system is not None
        runtime.system.tools.register(SchedulerTool(self.scheduler), replace=True)
        cap_fetches(runtime.system.tools, self.scheduler.heartbeats.fetches)
        runtime.health.register("scheduler", self.scheduler.health)
        self.scheduler.start()

    async def close(self) -> None:
        """Let detached turns' consumers finish (bounded), stop refreshing idempotency
        leases, release the limiter."""
        if self.scheduler is not None:
            await self.scheduler.stop()
        await self.channels.stop()
        await self.conversation.drain()
        if self._idempotency is not None:
            await self._idempotency.close()
        await self.limiter.close()


def services_of(request: Request) -> GatewayServices:
    """The services of the app serving ``request`` (set by ``create_app``)."""
    services: GatewayServices = request.app.state.services
    return services
