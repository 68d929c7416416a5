"""The typed event catalogue.

Every event any BeamClaw package emits is listed here (seed 001 "Observability Events"
plus the events later seeds and DESIGN.md add); docs/architecture.md lists the data each
carries. ``emit`` accepts only catalogue members, so a typo is a type error rather than a
silent new metric.

Invariant: every member is emitted by shipped code (tests/integration/test_observability.py
proves it). A feature that does not exist yet has no events here: scheduler (jobs,
heartbeat) and channel (Telegram) events come back with their features.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class EventType(enum.StrEnum):
    """Names of observable events. Values are the wire/log names."""

    # seed 001
    AGENT_START = "agent_start"
    LLM_REQUEST = "llm_request"
    LLM_RESPONSE = "llm_response"
    TOOL_CALL_START = "tool_call_start"
    TOOL_CALL_RESULT = "tool_call_result"
    TURN_COMPLETE = "turn_complete"
    COMPACTION_COMPLETE = "compaction_complete"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_RESOLVED = "approval_resolved"
    SESSION_START = "session_start"
    SESSION_END = "session_end"
    # loop / sessions (seed 002, 004)
    LLM_RETRY = "llm_retry"
    LLM_FAILOVER = "llm_failover"
    TURN_CANCELLED = "turn_cancelled"
    TURN_ERROR = "turn_error"
    TURN_LIMIT_REACHED = "turn_limit_reached"
    QUEUE_ENQUEUED = "queue_enqueued"
    QUEUE_DROPPED = "queue_dropped"
    SESSION_RECOVERED = "session_recovered"
    SESSION_RESET = "session_reset"
    SUBAGENT_SPAWNED = "subagent_spawned"
    SUBAGENT_RESULT = "subagent_result"
    MEMORY_FLUSH = "memory_flush"
    # memory
    MEMORY_SEARCH = "memory_search"
    MEMORY_DEGRADED = "memory_degraded"
    EMBEDDING_REQUEST = "embedding_request"
    # supervision
    CHILD_STARTED = "child_started"
    CHILD_RESTARTED = "child_restarted"
    CHILD_GAVE_UP = "child_gave_up"
    # MCP
    MCP_SERVER_UP = "mcp_server_up"
    MCP_SERVER_DOWN = "mcp_server_down"
    MCP_TOOLS_CHANGED = "mcp_tools_changed"
    # gateway
    HTTP_REQUEST = "http_request"
    RATE_LIMITED = "rate_limited"
    AUTH_FAILED = "auth_failed"
    WEBHOOK_RECEIVED = "webhook_received"
    # sandbox
    SANDBOX_START = "sandbox_start"
    SANDBOX_STOP = "sandbox_stop"
    # process
    GATEWAY_START = "gateway_start"
    GATEWAY_STOP = "gateway_stop"


@dataclass(frozen=True, slots=True)
class Event:
    """One emitted event: its type, wall-clock timestamp (epoch seconds) and data."""

    type: EventType
    ts: float
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def session_id(self) -> str | None:
        value = self.data.get("session_id")
        return value if isinstance(value, str) else None
