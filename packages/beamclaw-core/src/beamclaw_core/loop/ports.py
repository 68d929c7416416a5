"""The ports a turn executor talks through, named after what they do.

:class:`LoopDeps` is all a :class:`~beamclaw_core.loop.executor.TurnExecutor` may reach:
six ports, each a :class:`~typing.Protocol`, and nothing else (no settings object, no
session lane, no registry of callables). One composition root
(:mod:`beamclaw_core.sessions.composition`) builds them for one lane's conversation.

Invariants:

* Every field of :class:`LoopDeps` is one of the Protocols below (a test checks it).
* A port belongs to one conversation: its methods take no conversation or session id.
* The pure machine imports none of this (its import contract); what the machine needs
  (limits, autonomy, approval rules) is plain data in
  :class:`~beamclaw_core.loop.context.LoopContext`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.inputs import CompactionDone
from beamclaw_core.loop.states import State
from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.messages import Message
from beamclaw_core.providers import Provider
from beamclaw_core.store import View
from beamclaw_tools import ToolCall, ToolDef, ToolResult


class ModelPort(Protocol):
    """The LLM a turn talks to and how its answer should travel."""

    @property
    def provider(self) -> Provider: ...

    @property
    def model(self) -> str | None:
        """A model replacing the provider's own for these calls (None: the provider's)."""
        ...

    @property
    def context_window(self) -> int:
        """Tokens the model accepts (compaction thresholds are a share of it)."""
        ...

    @property
    def coalesce_seconds(self) -> float:
        """Streamed text goes out at most once per this many seconds (0 = every delta)."""
        ...

    def wants_stream(self) -> bool:
        """Asked before each call: does anyone want its text as it streams? If not, the
        call is one non-streaming request (no drafts)."""
        ...


class ToolsPort(Protocol):
    """The tools the conversation's agent may use, and its standing grants."""

    def definitions(self) -> tuple[ToolDef, ...]:
        """What the model is offered, in order (policy applied)."""
        ...

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run one call; a failure is an error result (an unknown tool included)."""
        ...

    async def allow(self, tool: str) -> None:
        """Grant ``always`` durably (awaited before the tool runs)."""
        ...


class ConversationLog(Protocol):
    """The conversation's stored history and the LLM's view of it."""

    async def commit(
        self,
        state: State,
        messages: Sequence[Message],
        *,
        now: float,
        consumed_runs: tuple[str, ...],
        activity: bool,
    ) -> None:
        """Store ``state`` with ``messages`` in one transaction (``consumed_runs`` leave
        the queue in it), then extend the view by them."""
        ...

    async def view(self) -> View:
        """What the LLM sees now (loaded once, then kept in step by :meth:`commit`)."""
        ...

    async def history(self) -> list[Message]:
        """The view's messages repaired (every tool call answered, in order)."""
        ...

    async def system_prompt(self) -> list[Message]:
        """The system messages that precede the history in the next request (never stored)."""
        ...

    async def compact(
        self, reason: Literal["threshold", "overflow"], window: int
    ) -> CompactionDone:
        """Summarise old history into the view; the view is reloaded afterwards."""
        ...

    def invalidate(self) -> None:
        """Forget the in-memory view: the next :meth:`view` reads the store."""
        ...


class Clock(Protocol):
    """Wall-clock time and timers (virtual time in tests)."""

    def now(self) -> float:
        """Epoch seconds."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait (retries, approval timeouts, the turn deadline)."""
        ...


class EventsPort(Protocol):
    """Where the turn tells what happens."""

    def publish(self, event: TurnEvent) -> None:
        """Give a turn event to the conversation's subscribers (never blocks)."""
        ...

    def before_effect(self, effect: fx.Effect) -> None:
        """Tracing and fault-injection seam, called before each effect runs; raising
        crashes the loop (the supervisor restarts it from what is stored)."""
        ...


class SubAgentsPort(Protocol):
    """Child conversations of this one (``spawn_agents``) and this one's own result
    when it is a child (``submit_result``)."""

    async def spawn(self, effect: fx.SpawnSubAgents) -> None:
        """Start the children; each result comes back as a ``SubAgentResult`` event."""
        ...

    async def cancel(self, child_ids: tuple[str, ...]) -> None:
        """Stop these children (their results never arrive)."""
        ...

    def submit(self, result: str, success: bool) -> None:
        """Record this child's result for its parent."""
        ...


@dataclass(frozen=True, slots=True)
class LoopDeps:
    """The ports of one turn executor (built by the composition root per lane)."""

    model: ModelPort
    tools: ToolsPort
    log: ConversationLog
    clock: Clock
    events: EventsPort
    subagents: SubAgentsPort
