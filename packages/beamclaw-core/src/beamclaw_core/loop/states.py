"""Conversation states of the agentic loop (DESIGN.md §3, Bedrock REQ-BED-001).

Every state is a frozen pydantic model with a ``kind`` discriminator so it round-trips
through JSON (``conversations.state_data``) unchanged: what the machine holds is exactly
what a restarted process reads back. States of a running turn carry the :class:`Turn`
record (iteration count, usage, text so far), so limits survive a loop restart too.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from beamclaw_core.messages import Usage
from beamclaw_tools.types import ToolCall, ToolResult


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Turn(_Frozen):
    """Bookkeeping of the turn in progress (one user message → one final answer)."""

    turn_id: str
    started_at: float
    iterations: int = 0
    """LLM responses of this turn that asked for tools (bounded by max_tool_iterations)."""
    usage: Usage = Field(default_factory=Usage)
    text: str = ""
    """Every assistant text of the turn so far, joined: the turn's whole answer."""
    model: str | None = None
    allowed: tuple[str, ...] = ()
    """Tools the user answered ``/always`` for during this turn."""
    overflow_compacted: bool = False
    """A context overflow was already answered by compaction (retried once only)."""
    budget_remaining_usd: float | None = None
    """What the agent's daily cost budget had left when the turn started (None: no budget)."""
    requested_model: str | None = None
    """The model the turn was asked to use (``UserMessage.model``), kept so a turn recovered
    after a crash asks the same model; None: the agent's."""


class SubAgentOutcome(_Frozen):
    """What one child conversation returned."""

    child_id: str
    result: str
    success: bool = True


class Idle(_Frozen):
    """Ready for a user message; nothing in flight."""

    kind: Literal["idle"] = "idle"


class AwaitingLlm(_Frozen):
    """A request to the LLM is being prepared (context measured, compaction decided)."""

    kind: Literal["awaiting_llm"] = "awaiting_llm"
    turn: Turn


class Compacting(_Frozen):
    """The history is being compacted before the next LLM request."""

    kind: Literal["compacting"] = "compacting"
    turn: Turn
    reason: Literal["threshold", "overflow"] = "threshold"
    attempt: int = 1
    """The LLM attempt to resume with afterwards."""


class LlmRequesting(_Frozen):
    """An LLM request is in flight, or (``waiting_retry``) a retry timer is armed."""

    kind: Literal["llm_requesting"] = "llm_requesting"
    turn: Turn
    attempt: int = 1
    waiting_retry: bool = False
    streamed: bool = False
    """Text of this call has been streamed (the next step's text starts a new paragraph)."""


class AwaitingApproval(_Frozen):
    """``pending`` needs the user's yes/no before it may run (supervised autonomy)."""

    kind: Literal["awaiting_approval"] = "awaiting_approval"
    turn: Turn
    request_id: str
    pending: ToolCall
    remaining: tuple[ToolCall, ...] = ()
    completed: tuple[ToolResult, ...] = ()


class ToolExecuting(_Frozen):
    """``current`` runs; ``remaining`` follow serially in the order the model asked."""

    kind: Literal["tool_executing"] = "tool_executing"
    turn: Turn
    current: ToolCall
    remaining: tuple[ToolCall, ...] = ()
    completed: tuple[ToolResult, ...] = ()


class AwaitingSubAgents(_Frozen):
    """The ``spawn_agents`` call ``call`` waits for every child in ``pending``."""

    kind: Literal["awaiting_subagents"] = "awaiting_subagents"
    turn: Turn
    call: ToolCall
    children: tuple[str, ...]
    """Every child started by ``call``, in task order."""
    pending: tuple[str, ...]
    outcomes: tuple[SubAgentOutcome, ...] = ()
    remaining: tuple[ToolCall, ...] = ()
    completed: tuple[ToolResult, ...] = ()


class Cancelling(_Frozen):
    """The in-flight operation is being cancelled; the turn ends when it has stopped."""

    kind: Literal["cancelling"] = "cancelling"
    turn: Turn
    reason: str = "Cancelled by user"
    limit: str | None = None
    """Set when a limit (not the user) ended the turn, e.g. ``turn_timeout``."""


class Error(_Frozen):
    """The last turn failed; shown to the user as is (REQ-BED-006). A message recovers."""

    kind: Literal["error"] = "error"
    error_kind: str
    message: str


State = Annotated[
    Idle
    | AwaitingLlm
    | Compacting
    | LlmRequesting
    | AwaitingApproval
    | ToolExecuting
    | AwaitingSubAgents
    | Cancelling
    | Error,
    Field(discriminator="kind"),
]
"""Any conversation state."""

BusyState = (
    AwaitingLlm
    | Compacting
    | LlmRequesting
    | AwaitingApproval
    | ToolExecuting
    | AwaitingSubAgents
    | Cancelling
)

STATE_TYPES: tuple[type[BaseModel], ...] = (
    Idle,
    AwaitingLlm,
    Compacting,
    LlmRequesting,
    AwaitingApproval,
    ToolExecuting,
    AwaitingSubAgents,
    Cancelling,
    Error,
)

_STATE_ADAPTER: TypeAdapter[State] = TypeAdapter(State)


def is_busy(state: State) -> bool:
    """True while a turn is in progress (neither ``Idle`` nor ``Error``)."""
    return not isinstance(state, Idle | Error)


def turn_model(state: State) -> str | None:
    """The model override of the turn in progress (None: none, or no turn)."""
    if isinstance(state, Idle | Error):
        return None
    return state.turn.requested_model


def recovery_form(state: State) -> State:
    """What recovery needs of ``state``: the state a restart must find persisted.

    After a crash or restart every state with an LLM operation in flight (``AwaitingLlm``,
    ``Compacting``, ``LlmRequesting`` in any attempt, streaming or waiting for a retry) is
    recovered the same way from its :class:`Turn` alone (the turn resumes with a fresh
    context measurement), so they all map to ``AwaitingLlm(turn)``. Every other state is
    its own recovery form. The executor skips the database commit of a transition that
    appends no message and leaves this form unchanged (a property test checks that
    recovering from the form equals recovering from the state).
    """
    if isinstance(state, Compacting | LlmRequesting):
        return AwaitingLlm(turn=state.turn)
    return state


def state_to_json(state: State) -> dict[str, object]:
    """The JSON form stored in ``conversations.state_data``."""
    return state.model_dump(mode="json")


def state_from_json(data: object) -> State:
    """Inverse of :func:`state_to_json`."""
    return _STATE_ADAPTER.validate_python(data)
