"""The one way a front end talks to conversations: the :class:`Conversation` port.

Every front end — ``/ws``, the OpenAI routes, webhooks, A2A, channel adapters, the TUI and
``beamclaw mcp serve`` — sends, follows, answers and pages through this port, whether the
agent system runs in the same process (:class:`~beamclaw_core.conversation.local.LocalConversation`)
or in a gateway reached over HTTP (the CLI's remote implementation). Values crossing it
are the core's own: :class:`~beamclaw_core.loop.TurnEvent`, :class:`TurnResult`,
:class:`~beamclaw_core.sessions.SessionInfo`, :class:`~beamclaw_core.messages.Message`.

Error contract for implementations: an unknown session raises
:class:`~beamclaw_core.sessions.UnknownSessionError`; a subscription from a number that is
no longer kept :class:`~beamclaw_core.sessions.ReplayGapError`, from one never given out
:class:`~beamclaw_core.sessions.FutureSequenceError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:  # annotations only: the port loads without the loop or the store
    from beamclaw_core.loop.inputs import Decision
    from beamclaw_core.loop.turn_events import TurnEvent
    from beamclaw_core.messages import Message
    from beamclaw_core.sessions.control import SessionInfo
    from beamclaw_core.sessions.fold import TurnResult
    from beamclaw_core.sessions.runs import SessionAddress
    from beamclaw_tools import ContentPart

ApprovalMode = Literal["deny", "wait"]
"""What a turn nobody answers interactively does with an approval: ``deny`` it at once
(with a clear tool message to the model) or ``wait`` for an answer from any front end
up to the approval timeout."""

AnswerOutcome = Literal["answered", "already_answered", "unknown"]
"""What answering an approval by id did."""


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """A message to send: who speaks (``address``), what, and how the sender follows it."""

    address: SessionAddress
    content: str | tuple[ContentPart, ...]
    session_id: str | None = None
    """An explicit conversation; None: the one ``address`` derives (shared across the
    person's channels unless ``session_sharing = "per_channel"``)."""
    approval_mode: ApprovalMode = "deny"
    source_message_id: str | None = None
    """The client's id of the message (a retry with the same id never runs twice)."""
    drafts: bool = True
    """The sender reads the answer as it streams; False lets the turn's LLM calls be
    non-streaming requests when nobody else watches the session."""
    scheduled: bool = False
    """The scheduler sends it (a job, a heartbeat), not a person: it is never merged with
    people's queued messages (``collect`` mode)."""
    model: str | None = None
    """A model of the agent's provider for this turn only (a heartbeat's cheaper model);
    None: the agent's configured one. Kept with the turn, so a recovered turn uses it too."""


@dataclass(frozen=True, slots=True)
class PendingApprovalInfo:
    """A tool call waiting for a decision."""

    session_id: str
    request_id: str
    agent_id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One stored message of a conversation with its number and time."""

    seq: int
    message: Message
    created_at: float | None = None


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A run of stored messages, oldest first (:meth:`Conversation.history`)."""

    session_id: str
    entries: tuple[HistoryEntry, ...]
    has_more: bool
    """Older messages exist before this page."""
    total: int = 0
    """How many messages the conversation holds in all."""
    event_seq: int = 0
    """The session's latest event number when the page was read: subscribing from it
    misses nothing published since."""


OnEvent: TypeAlias = "Callable[[TurnEvent], Awaitable[None]]"
OnDone: TypeAlias = "Callable[[TurnResult], Awaitable[None]]"


@runtime_checkable
class Turn(Protocol):
    """A turn that was sent: its events while it runs, its result when it ends.

    The turn is consumed by its conversation, not by the caller: a caller that stops
    reading (a client that disconnects) loses nothing — the turn completes, is stored,
    and its ``on_done`` runs."""

    @property
    def session_id(self) -> str: ...

    @property
    def turn_id(self) -> str: ...

    def events(self) -> AsyncIterator[TurnEvent]:
        """This turn's events up to and including its terminal one (one reader)."""
        ...

    async def result(self) -> TurnResult: ...


@runtime_checkable
class EventStream(Protocol):
    """A session's events (replayed ones first, then live) until ``close``."""

    @property
    def opened_at_seq(self) -> int: ...

    @property
    def replayed(self) -> int: ...

    def __aiter__(self) -> AsyncIterator[TurnEvent]: ...

    def close(self) -> None: ...


@runtime_checkable
class Conversation(Protocol):
    """Conversations as every front end uses them (see the module docstring)."""

    async def send(
        self,
        request: TurnRequest,
        *,
        on_event: OnEvent | None = None,
        on_done: OnDone | None = None,
    ) -> Turn:
        """Hand the message over and return once it is accepted (not when its turn ends);
        ``on_event`` sees each event of the turn, ``on_done`` its result."""
        ...

    async def subscribe(self, session_id: str, *, after_seq: int | None = None) -> EventStream:
        """Every event of a session from now on, whichever front end started the turn;
        with ``after_seq`` the kept events after it come first, each once."""
        ...

    async def answer(self, approval_id: str, decision: Decision) -> AnswerOutcome:
        """Answer a pending approval from anywhere; the first answer stands."""
        ...

    async def pending_approvals(self, session_id: str | None = None) -> list[PendingApprovalInfo]:
        """Approvals waiting for a decision (of one session, or all)."""
        ...

    async def stop(self, session_id: str) -> int:
        """``/stop``: cancel the running turn and clear the queue; returns what was cleared."""
        ...

    async def new(self, session_id: str) -> None:
        """``/new``: the conversation starts afresh (its stored history stays)."""
        ...

    async def history(
        self, session_id: str, *, limit: int | None = 50, before_seq: int | None = None
    ) -> HistoryPage:
        """The last ``limit`` stored messages (None: all), only those numbered below
        ``before_seq`` when given."""
        ...

    async def info(self, session_id: str) -> SessionInfo:
        """One conversation's agent, person, channel and state."""
        ...

    async def sessions(self, *, agent: str | None = None) -> list[SessionInfo]:
        """Top-level conversations (no sub-agent children), most recently active first."""
        ...
