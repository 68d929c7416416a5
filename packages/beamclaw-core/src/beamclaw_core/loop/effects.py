"""Effects the machine asks the executor to perform (DESIGN.md §3 "Effects").

The executor persists the new state and every :class:`PersistMessage` of one transition
in one database transaction *before* running the other effects, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from beamclaw_core.loop.turn_events import TurnEvent
from beamclaw_core.messages import Message
from beamclaw_tools.types import ToolCall


@dataclass(frozen=True, slots=True)
class PersistMessage:
    """Append ``message`` to the conversation (one INSERT; history is never rewritten)."""

    message: Message


@dataclass(frozen=True, slots=True)
class NotifyClient:
    """Publish ``event`` on the session's event stream."""

    event: TurnEvent


@dataclass(frozen=True, slots=True)
class MeasureContext:
    """Estimate the next request's prompt tokens; answer with ``ContextMeasured``."""


@dataclass(frozen=True, slots=True)
class Compact:
    """Compact the LLM view (memory flush first when enabled); answer ``CompactionDone``."""

    reason: Literal["threshold", "overflow"]


@dataclass(frozen=True, slots=True)
class RequestLlm:
    """Stream one LLM call over the current view; answer chunks, then response or error."""

    attempt: int


@dataclass(frozen=True, slots=True)
class ScheduleRetry:
    """Answer ``RetryTimer(attempt)`` after ``delay`` seconds."""

    delay: float
    attempt: int


@dataclass(frozen=True, slots=True)
class ExecuteTool:
    """Run one tool call; answer ``ToolComplete`` whatever happens (error, timeout…)."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class RequestApproval:
    """Ask the originating channel; answer ``ApprovalDecision`` (``timeout`` after ``timeout``)."""

    request_id: str
    call: ToolCall
    timeout: float


@dataclass(frozen=True, slots=True)
class AllowTool:
    """Grant ``tool`` to the session's person for its agent (the user answered ``/always``);
    the grant is durable before the tool's ``ExecuteTool`` runs."""

    tool: str


@dataclass(frozen=True, slots=True)
class SubAgentTask:
    child_id: str
    task: str
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpawnSubAgents:
    """Start one child conversation per task; each answers ``SubAgentResult``."""

    parent_call_id: str
    tasks: tuple[SubAgentTask, ...]


@dataclass(frozen=True, slots=True)
class CancelSubAgents:
    child_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """A child conversation's ``submit_result``: deliver it to the parent."""

    result: str
    success: bool


@dataclass(frozen=True, slots=True)
class CancelOperation:
    """Stop the in-flight LLM call, tool, timer or compaction; no event of it follows.

    With ``ack`` the executor answers ``OperationCancelled`` once it has stopped.
    """

    ack: bool = False


Effect = (
    PersistMessage
    | NotifyClient
    | MeasureContext
    | Compact
    | RequestLlm
    | ScheduleRetry
    | ExecuteTool
    | RequestApproval
    | AllowTool
    | SpawnSubAgents
    | CancelSubAgents
    | SubmitResult
    | CancelOperation
)
"""Any effect."""
