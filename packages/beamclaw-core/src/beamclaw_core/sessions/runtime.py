"""What every session lane shares: configuration, store, providers, tools, clock."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from beamclaw_core.agent_settings import AgentSettings, agent_profile
from beamclaw_core.approvals import AlwaysAllowlist
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.context import ApprovalRules
from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.messages import Message
from beamclaw_core.providers import Provider
from beamclaw_core.sessions.admission import TurnStarts
from beamclaw_core.sessions.ends import SessionEnds
from beamclaw_core.settings import CoreSettings
from beamclaw_core.store import ConversationStore
from beamclaw_tools import Autonomy, SessionRef, ToolPolicy, ToolRegistry


class SystemPromptSource(Protocol):
    """Builds the system messages of the next LLM request of a session.

    ``latest_user_message`` is the text of the message that started the current turn
    (None when there is none, e.g. a maintenance compaction); the workspace prompt uses
    it to promote the matching skill. :meth:`Core.create <beamclaw_core.api.Core.create>`
    also accepts older two-argument sources and calls them without it.
    """

    async def __call__(
        self,
        session: SessionRef,
        last_activity_at: float | None,
        latest_user_message: str | None = None,
    ) -> list[Message]: ...


ProviderLookup = Callable[[str], Provider]
"""Agent id → the provider that agent talks to (built once, looked up per turn).

Not to be confused with :data:`~beamclaw_core.providers.ProviderFactory`, which builds a
provider of one ``kind`` from its configuration section."""


@dataclass(frozen=True, slots=True)
class Runtime:
    """Shared dependencies of all lanes, frozen once built.

    Built by the composition root (:func:`~beamclaw_core.sessions.composition.build_runtime`)
    for one :class:`~beamclaw_core.api.Core`; nothing changes it afterwards. The hooks that
    reach back into the core (``spawn``, ``cancel_children``, the indexing half of
    ``on_effect``, the latest-message lookup inside ``system_prompt``) are given to the
    root when it builds the runtime.
    """

    settings: CoreSettings
    store: ConversationStore
    provider_for: ProviderLookup
    system_prompt: SystemPromptSource
    """The source the lanes call (the core's per-turn wrapper around the configured one)."""
    clock: Callable[[], float]
    always: AlwaysAllowlist
    """Standing ``/always`` grants per agent and person, shared by every lane."""
    on_effect: Callable[[fx.Effect], None]
    """Called before every effect of every loop (tracing, fault injection, indexing)."""
    spawn: Callable[[str, fx.SpawnSubAgents], Awaitable[None]]
    """``(parent id, effect)``: start the children of a ``spawn_agents`` call."""
    cancel_children: Callable[[tuple[str, ...]], Awaitable[None]]
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    """Every timer of the lanes and loops (debounce, retries, deadlines); tests inject
    virtual time together with ``clock``."""
    compaction_provider: Provider | None = None
    tools: ToolRegistry | None = None
    tool_policy_for: Callable[[str], ToolPolicy | None] = field(default=lambda _a: None)
    subscriber_buffer: int = 1024
    ends: SessionEnds = field(default_factory=SessionEnds)
    """Session-end hooks (``Core.on_session_end``), fired by resets and lane closes."""
    event_replay: int = 512
    """Events each session keeps numbered for clients that reconnect (``[core]
    event_replay``)."""
    context_window_for: Callable[[Provider], int] = field(
        default=lambda p: p.capabilities().context_window
    )
    approval_rules: ApprovalRules = field(default_factory=ApprovalRules)
    """Shared by every lane: a fresh session's first turn finds the rules built."""
    agents: Mapping[str, AgentSettings] = field(default_factory=dict[str, AgentSettings])
    """``[agents.<id>]``: per-agent choices; an agent not listed uses ``[core]``."""
    relay: Callable[[TurnEvent], None] | None = None
    """Cluster hook: every event a lane publishes also goes to the other nodes (None on
    a single node)."""
    turn_starts: TurnStarts = field(default_factory=lambda: TurnStarts(0))
    """Slots of the turns preparing their first model call (:mod:`.admission`)."""

    def autonomy_for(self, agent_id: str) -> Autonomy:
        """The agent's ``autonomy_level``, else ``[core] autonomy_level``."""
        return agent_profile(self.settings, self.agents, agent_id).autonomy

    def local_day_start(self, now: float) -> float:
        """Epoch seconds of today's local midnight (daily cost budgets)."""
        local = dt.datetime.fromtimestamp(now).astimezone()
        return local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()

    def reset_reason(self, last_activity: float, now: float) -> str | None:
        """Why a session last active at ``last_activity`` starts fresh at ``now``
        (``[core.reset]``, ``session_ttl_seconds``; see :func:`reset_due`), or None."""
        cfg = self.settings.reset
        return reset_due(
            last_activity,
            now,
            daily_hour=cfg.daily_hour,
            idle_minutes=cfg.idle_minutes,
            session_ttl_seconds=self.settings.session_ttl_seconds,
        )

    async def budget_left(self, agent_id: str, now: float) -> float | None:
        """What ``agent_id`` may still spend today (``daily_cost_budget_usd``); None:
        no budget."""
        budget = self.settings.daily_cost_budget_usd
        if budget is None:
            return None
        return budget - await self.store.cost_since(agent_id, self.local_day_start(now))


def reset_due(
    last_activity: float,
    now: float,
    *,
    daily_hour: int | None,
    idle_minutes: int | None,
    session_ttl_seconds: int = 0,
) -> str | None:
    """Why a session last active at ``last_activity`` must start fresh at ``now`` (or None).

    Daily: the most recent local ``daily_hour`` o'clock lies between the two instants.
    Idle: more time passed than the smaller of the limits set (``idle_minutes``; the
    session TTL ``session_ttl_seconds``, 0 = unset): both keys end the context the same way.
    """
    limit = idle_limit_seconds(idle_minutes, session_ttl_seconds)
    if limit is not None and now - last_activity > limit:
        return f"idle for more than {_duration(limit)}"
    if daily_hour is not None:
        local_now = dt.datetime.fromtimestamp(now).astimezone()
        boundary = local_now.replace(hour=daily_hour, minute=0, second=0, microsecond=0)
        if boundary > local_now:
            boundary -= dt.timedelta(days=1)
        if last_activity < boundary.timestamp() <= now:
            return f"daily reset at {daily_hour:02d}:00"
    return None


def idle_limit_seconds(idle_minutes: int | None, session_ttl_seconds: int) -> int | None:
    """The effective idle limit: the smaller of ``idle_minutes`` and the TTL, those set."""
    idle = idle_minutes * 60 if idle_minutes is not None else 0
    return min((limit for limit in (idle, session_ttl_seconds) if limit > 0), default=None)


def _duration(seconds: int) -> str:
    value, unit = (seconds // 60, "minute") if seconds % 60 == 0 else (seconds, "second")
    return f"{value} {unit}{'' if value == 1 else 's'}"
