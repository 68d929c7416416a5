"""The core's composition root: what a :class:`~beamclaw_core.api.Core` is made of, wired.

:class:`CoreParts` is what the embedder chose (``Core.create`` fills the defaults);
:func:`build_runtime` turns it into the frozen :class:`Runtime` every lane shares;
:func:`lane_ports` builds the ports one turn executor talks through
(:class:`~beamclaw_core.loop.ports.LoopDeps`).

Invariants:

* This is the only place that constructs a :class:`Runtime` or a ``LoopDeps``.
* Nothing built here is changed afterwards: the runtime is frozen, and the hooks that
  reach back into the core (:class:`CoreHooks`) are given before it is built.
* The embedder's ``on_effect`` runs before the core's own hook, so a fault injected
  there stops the effect before anything else sees it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field

from beamclaw_core.agent_settings import AgentSettings
from beamclaw_core.approvals import AlwaysAllowlist
from beamclaw_core.cluster.ports import ClusterLink
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.executor import ViewCache
from beamclaw_core.loop.ports import LoopDeps
from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.messages import Message
from beamclaw_core.providers import Provider
from beamclaw_core.sessions.admission import (
    AdmittedProvider,
    StartSlot,
    TurnStarts,
    releasing,
)
from beamclaw_core.sessions.loop_ports import (
    CompactFn,
    LaneEvents,
    LaneModel,
    LaneSubAgents,
    RegistryTools,
    RuntimeClock,
    StoredConversation,
)
from beamclaw_core.sessions.memory_context import AutoContext
from beamclaw_core.sessions.prompts import TurnPrompt
from beamclaw_core.sessions.runtime import ProviderLookup, Runtime, SystemPromptSource
from beamclaw_core.sessions.short_term import ShortTerm
from beamclaw_core.settings import CoreSettings
from beamclaw_core.store import ConversationStore
from beamclaw_core.subagents.definitions import subagent_tools
from beamclaw_memory import Database, MemoryService, MemorySettings
from beamclaw_tools import SessionRef, ToolPolicy, ToolRegistry


def _no_policy(_agent_id: str) -> ToolPolicy | None:
    return None


def provider_lookup(provider: Provider | ProviderLookup) -> ProviderLookup:
    """One provider for every agent, or already ``agent_id -> Provider``."""
    if isinstance(provider, Provider):
        fixed = provider
        return lambda _agent_id: fixed
    return provider


@dataclass(frozen=True, slots=True)
class CoreParts:
    """What a core is made of, as the embedder chose it (see :meth:`Core.create
    <beamclaw_core.api.Core.create>` for each part's meaning)."""

    settings: CoreSettings
    database: Database
    providers: ProviderLookup
    system_prompt: SystemPromptSource
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    tools: ToolRegistry | None = None
    tool_policy: Callable[[str], ToolPolicy | None] = _no_policy
    compaction_provider: Provider | None = None
    on_effect: Callable[[fx.Effect], None] | None = None
    subscriber_buffer: int = 1024
    memory: MemoryService | None = None
    memory_settings: MemorySettings = field(default_factory=MemorySettings)
    agents: Mapping[str, AgentSettings] = field(default_factory=dict[str, AgentSettings])
    link: ClusterLink | None = None
    """Cluster mode (docs/scale-out.md): leases, commands and events shared with other
    nodes; None is one node alone (:class:`~beamclaw_core.cluster.LocalLink`)."""


@dataclass(frozen=True, slots=True)
class CoreHooks:
    """What the lanes ask of the core that holds them (it alone knows every lane)."""

    latest_user_message: Callable[[str], Awaitable[tuple[Hashable, str | None]]]
    """``session_id -> (turn key, text)`` of the message that started its current turn."""
    on_effect: Callable[[fx.Effect], None]
    """The core's bookkeeping before each effect (transcript indexing, lane use)."""
    spawn: Callable[[str, fx.SpawnSubAgents], Awaitable[None]]
    cancel_children: Callable[[tuple[str, ...]], Awaitable[None]]
    view_start: Callable[[str], Awaitable[int | None]]
    """``session_id ->`` the ``seq`` of the first message its LLM view shows verbatim
    (auto-context leaves out the transcript hits the model reads there)."""


def _chain(
    first: Callable[[fx.Effect], None] | None, then: Callable[[fx.Effect], None]
) -> Callable[[fx.Effect], None]:
    if first is None:
        return then

    def both(effect: fx.Effect) -> None:
        first(effect)
        then(effect)

    return both


def build_runtime(parts: CoreParts, hooks: CoreHooks) -> Runtime:
    """The runtime of one core: store, grants, the per-turn prompt and the hooks."""
    memory, memory_cfg = parts.memory, parts.memory_settings
    auto_context = (
        AutoContext(
            memory,
            memory_cfg.auto_context_limit,
            max_tokens=memory_cfg.auto_context_max_tokens,
            deadline_seconds=memory_cfg.auto_context_deadline_ms / 1000,
            view_start=hooks.view_start,
        )
        if memory is not None and memory_cfg.auto_context
        else None
    )
    on_effect = _chain(parts.on_effect, hooks.on_effect)
    if auto_context is not None:  # a turn's context leaves memory when the turn ends
        on_effect = _chain(on_effect, auto_context.on_effect)
    store = ConversationStore(parts.database)
    short_term_cfg = parts.settings.short_term
    short_term = ShortTerm(store, short_term_cfg) if short_term_cfg.enabled else None
    runtime = Runtime(
        settings=parts.settings,
        store=store,
        provider_for=parts.providers,
        system_prompt=TurnPrompt(
            parts.system_prompt, hooks.latest_user_message, auto_context, short_term
        ),
        clock=parts.clock,
        always=AlwaysAllowlist(parts.database, parts.clock),
        on_effect=on_effect,
        spawn=hooks.spawn,
        cancel_children=hooks.cancel_children,
        sleep=parts.sleep,
        compaction_provider=parts.compaction_provider,
        tools=parts.tools,
        tool_policy_for=parts.tool_policy,
        subscriber_buffer=parts.subscriber_buffer,
        event_replay=parts.settings.event_replay,
        agents=dict(parts.agents),
        relay=parts.link.publish if parts.link is not None and parts.link.shared else None,
        turn_starts=TurnStarts(parts.settings.agentic_loop.turn_starts),
    )
    for cache in (auto_context, short_term):
        if cache is not None:
            runtime.ends.add(cache.session_ended)
    return runtime


def lane_ports(
    rt: Runtime,
    *,
    session: SessionRef,
    view: ViewCache,
    last_activity_at: float,
    is_sub_agent: bool,
    publish: Callable[[TurnEvent], None],
    wants_drafts: Callable[[], bool],
    allow_tool: Callable[[str], Awaitable[None]],
    compact: CompactFn,
    submit: Callable[[str, bool], None],
    model: str | None = None,
    slot: StartSlot | None = None,
) -> LoopDeps:
    """The ports of one turn executor of the lane of ``session``.

    The agent's provider, context window and tool policy are looked up now, once per
    turn (a restarted loop looks them up again).
    """
    provider = rt.provider_for(session.agent_id)

    async def system_prompt() -> list[Message]:
        return await rt.system_prompt(session, last_activity_at)

    return LoopDeps(
        model=LaneModel(
            # the turn's start slot goes back as it calls the model
            provider=provider if slot is None else AdmittedProvider(provider, slot),
            context_window=rt.context_window_for(provider),
            coalesce_seconds=rt.settings.agentic_loop.stream_coalesce_ms / 1000,
            live=wants_drafts,
            model=model,
        ),
        tools=RegistryTools(
            registry=rt.tools,
            policy=rt.tool_policy_for(session.agent_id),
            session=session,
            extra=subagent_tools(is_sub_agent),
            grant=allow_tool,
            media_max_bytes=rt.settings.attachments.max_image_bytes,
        ),
        log=StoredConversation(
            store=rt.store,
            conversation_id=session.session_id,
            cache=view,
            prompt=system_prompt,
            compactor=compact,
        ),
        clock=RuntimeClock(rt.clock, rt.sleep),
        events=LaneEvents(publish, rt.on_effect if slot is None else releasing(rt.on_effect, slot)),
        subagents=LaneSubAgents(session.session_id, rt.spawn, rt.cancel_children, submit),
    )
