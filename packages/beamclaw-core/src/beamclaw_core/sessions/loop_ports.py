"""The session side's implementations of the loop's ports (:mod:`beamclaw_core.loop.ports`).

Each adapter is a small frozen value over what a lane and the shared
:class:`~beamclaw_core.sessions.runtime.Runtime` already own; the composition root
(:func:`~beamclaw_core.sessions.composition.lane_ports`) builds one set per turn executor.

Invariants:

* Adapters hold no state of their own: the view lives in the lane's
  :class:`~beamclaw_core.loop.executor.ViewCache`, grants in its allowlist, events in its
  bus; an adapter dropped with its executor loses nothing.
* The tool list is read from the registry at every request (MCP servers come and go).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.executor import ViewCache
from beamclaw_core.loop.inputs import CompactionDone
from beamclaw_core.loop.states import State
from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.messages import Message
from beamclaw_core.providers import Provider
from beamclaw_core.store import ConversationStore, View
from beamclaw_core.tool_media import attach_media
from beamclaw_tools import SessionRef, ToolCall, ToolDef, ToolPolicy, ToolRegistry, ToolResult
from beamclaw_tools.paths import WorkspaceRoots

CompactFn = Callable[[Literal["threshold", "overflow"], int], Awaitable[CompactionDone]]
"""``(reason, context window) -> CompactionDone``: compact one conversation."""


@dataclass(frozen=True, slots=True)
class LaneModel:
    """:class:`~beamclaw_core.loop.ports.ModelPort`: the agent's provider."""

    provider: Provider
    context_window: int
    coalesce_seconds: float
    live: Callable[[], bool]
    """Does an open subscription want drafts (the lane's bus)?"""
    model: str | None = None

    def wants_stream(self) -> bool:
        return self.live()


@dataclass(frozen=True, slots=True)
class RegistryTools:
    """:class:`~beamclaw_core.loop.ports.ToolsPort`: the registry seen through the agent's
    policy, plus the loop's own tools (``spawn_agents``/``submit_result``)."""

    registry: ToolRegistry | None
    policy: ToolPolicy | None
    session: SessionRef
    extra: tuple[ToolDef, ...]
    grant: Callable[[str], Awaitable[None]]
    """Records a durable ``always`` grant (the person's allowlist)."""
    media_max_bytes: int = 0
    """The largest image a ``MEDIA:`` line may attach (:mod:`beamclaw_core.tool_media`);
    0: such lines are left as they are."""

    def definitions(self) -> tuple[ToolDef, ...]:
        listed = self.registry.listed(self.policy) if self.registry is not None else ()
        return (*listed, *self.extra)

    async def execute(self, call: ToolCall) -> ToolResult:
        if self.registry is None:
            return ToolResult(
                tool_call_id=call.id,
                name=call.name,
                is_error=True,
                content=f"unknown tool {call.name!r}: no tools are configured",
            )
        result = await self.registry.execute(call, self.session, policy=self.policy)
        if self.media_max_bytes <= 0 or result.is_error:
            return result
        roots = WorkspaceRoots.for_session(self.session)
        return await attach_media(result, roots, self.media_max_bytes)

    async def allow(self, tool: str) -> None:
        await self.grant(tool)


@dataclass(frozen=True, slots=True)
class StoredConversation:
    """:class:`~beamclaw_core.loop.ports.ConversationLog`: the conversation store plus
    the lane's in-memory view."""

    store: ConversationStore
    conversation_id: str
    cache: ViewCache
    prompt: Callable[[], Awaitable[list[Message]]]
    compactor: CompactFn

    async def commit(
        self,
        state: State,
        messages: Sequence[Message],
        *,
        now: float,
        consumed_runs: tuple[str, ...],
        activity: bool,
    ) -> None:
        await self.store.commit(
            self.conversation_id,
            state,
            messages,
            now=now,
            consumed_runs=consumed_runs,
            activity=activity,
        )
        self.cache.extend(messages)

    async def view(self) -> View:
        return await self.cache.get()

    async def history(self) -> list[Message]:
        return await self.cache.history()

    async def system_prompt(self) -> list[Message]:
        return await self.prompt()

    async def compact(
        self, reason: Literal["threshold", "overflow"], window: int
    ) -> CompactionDone:
        return await self.compactor(reason, window)

    def invalidate(self) -> None:
        self.cache.invalidate()


@dataclass(frozen=True, slots=True)
class RuntimeClock:
    """:class:`~beamclaw_core.loop.ports.Clock` over the runtime's clock and sleep."""

    clock: Callable[[], float]
    sleeper: Callable[[float], Awaitable[None]]

    def now(self) -> float:
        return self.clock()

    async def sleep(self, seconds: float) -> None:
        await self.sleeper(seconds)


@dataclass(frozen=True, slots=True)
class LaneEvents:
    """:class:`~beamclaw_core.loop.ports.EventsPort`: the lane's bus and the runtime's
    effect hook."""

    publisher: Callable[[TurnEvent], None]
    hook: Callable[[fx.Effect], None]

    def publish(self, event: TurnEvent) -> None:
        self.publisher(event)

    def before_effect(self, effect: fx.Effect) -> None:
        self.hook(effect)


@dataclass(frozen=True, slots=True)
class LaneSubAgents:
    """:class:`~beamclaw_core.loop.ports.SubAgentsPort` for the conversation ``parent_id``."""

    parent_id: str
    spawner: Callable[[str, fx.SpawnSubAgents], Awaitable[None]]
    canceller: Callable[[tuple[str, ...]], Awaitable[None]]
    submitter: Callable[[str, bool], None]

    async def spawn(self, effect: fx.SpawnSubAgents) -> None:
        await self.spawner(self.parent_id, effect)

    async def cancel(self, child_ids: tuple[str, ...]) -> None:
        await self.canceller(child_ids)

    def submit(self, result: str, success: bool) -> None:
        self.submitter(result, success)
