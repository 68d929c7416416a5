"""Events the machine consumes (DESIGN.md §3 "Events").

Frozen dataclasses. Everything the machine may not compute itself — the time, ids, the
measured context size, an LLM's answer, a tool's result — arrives inside an event.
Results of LLM calls and tools are already scrubbed by the executor when they get here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from beamclaw_core.kinds import ErrorKind
from beamclaw_core.messages import Message, Usage
from beamclaw_tools.types import ToolResult

Decision = Literal["yes", "no", "always", "timeout"]


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A run taken off the session's queue. ``ts`` is the wall clock at dequeue."""

    turn_id: str
    message: Message
    ts: float
    budget_remaining_usd: float | None = None
    """Today's remaining cost budget of the agent; None when no budget is configured."""
    model: str | None = None
    """The turn's model override (a heartbeat's cheaper model); None: the agent's."""


@dataclass(frozen=True, slots=True)
class Cancel:
    """``/stop``, an interrupting message or ``cancel()``."""

    reason: str = "Cancelled by user"


@dataclass(frozen=True, slots=True)
class ContextMeasured:
    """Estimated prompt tokens of the next request and the model's context window."""

    tokens: int
    window: int


@dataclass(frozen=True, slots=True)
class CompactionDone:
    before_tokens: int
    after_tokens: int
    summarized_messages: int
    fallback: bool = False


@dataclass(frozen=True, slots=True)
class LlmChunk:
    """Streamed answer text (already thinking-stripped)."""

    text: str


@dataclass(frozen=True, slots=True)
class LlmResponse:
    """The complete (scrubbed, parsed) assistant message of one LLM call."""

    message: Message
    usage: Usage
    model: str | None = None


@dataclass(frozen=True, slots=True)
class LlmError:
    kind: ErrorKind
    message: str
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class RetryTimer:
    """The backoff delay before ``attempt`` has elapsed."""

    attempt: int


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    request_id: str
    decision: Decision


@dataclass(frozen=True, slots=True)
class ToolComplete:
    """The current tool finished — successfully, with an error, by exception or timeout."""

    result: ToolResult


@dataclass(frozen=True, slots=True)
class SubAgentResult:
    child_id: str
    result: str
    success: bool = True


@dataclass(frozen=True, slots=True)
class OperationCancelled:
    """The executor confirms the in-flight operation has stopped (after ``CancelOperation``)."""


@dataclass(frozen=True, slots=True)
class TurnDeadline:
    """The turn's wall-clock budget (``turn_timeout_seconds``) ran out."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Interrupted:
    """The loop restarted (crash or process restart) while the turn was in ``state``.

    Pending tool calls are answered with synthetic results; with ``resume`` the turn goes
    on (the model is asked again), otherwise it ends.
    """

    reason: str
    resume: bool


Input = (
    UserMessage
    | Cancel
    | ContextMeasured
    | CompactionDone
    | LlmChunk
    | LlmResponse
    | LlmError
    | RetryTimer
    | ApprovalDecision
    | ToolComplete
    | SubAgentResult
    | OperationCancelled
    | TurnDeadline
    | Interrupted
)
"""Any event the machine consumes."""

INPUT_TYPES: tuple[type, ...] = (
    UserMessage,
    Cancel,
    ContextMeasured,
    CompactionDone,
    LlmChunk,
    LlmResponse,
    LlmError,
    RetryTimer,
    ApprovalDecision,
    ToolComplete,
    SubAgentResult,
    OperationCancelled,
    TurnDeadline,
    Interrupted,
)
