"""The fixed facts a transition may consult (Bedrock ``ConvContext``).

A :class:`LoopContext` is built by the executor once per turn from configuration and
the session (autonomy, allowlist, tool policies). It holds no clock and no I/O handle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from beamclaw_core.attachments import ImageLimits
from beamclaw_tools.types import Autonomy, ToolDef

SPAWN_AGENTS_TOOL = "spawn_agents"
"""Tool a top-level conversation uses to start child conversations (REQ-BED-008)."""
SUBMIT_RESULT_TOOL = "submit_result"
"""Tool only child conversations have: hands the result back to the parent (REQ-BED-009)."""


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """What the loop enforces for one tool (from its :class:`ToolDef`)."""

    requires_approval: bool = False
    min_autonomy: Autonomy = Autonomy.READ_ONLY

    @classmethod
    def of(cls, definition: ToolDef) -> ApprovalRule:
        return cls(definition.requires_approval, definition.min_autonomy)


class ApprovalRules:
    """The rules of a listed tool set (``ToolRegistry.listed``), built once per set.

    Kept by the tuple's identity (the registry hands out a new tuple whenever its tools
    change), a few sets at a time: one per tool policy in use."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._sets: dict[int, tuple[tuple[ToolDef, ...], Mapping[str, ApprovalRule]]] = {}

    def of(self, listed: tuple[ToolDef, ...]) -> Mapping[str, ApprovalRule]:
        hit = self._sets.get(id(listed))
        if hit is None or hit[0] is not listed:  # the entry holds its tuple: ids can't alias
            if len(self._sets) >= self._size:
                self._sets.clear()
            rules = MappingProxyType({d.name: ApprovalRule.of(d) for d in listed})
            hit = self._sets[id(listed)] = (listed, rules)
        return hit[1]


@dataclass(frozen=True, slots=True)
class LoopLimits:
    """Bounds of one turn (DESIGN.md §3 invariant 5) and retry/approval timing."""

    max_tool_iterations: int = 15
    max_attempts: int = 3
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    retry_after_cap: float = 120.0
    """A server's Retry-After is honoured up to this many seconds."""
    max_tokens_per_turn: int | None = None
    approval_timeout: float = 300.0
    compaction_threshold_pct: int = 80
    max_subagents: int = 5
    turn_timeout_seconds: float | None = None
    images: ImageLimits = field(default_factory=ImageLimits)
    """What a tool's images must meet to reach the model (others become notes)."""


@dataclass(frozen=True, slots=True)
class LoopContext:
    """Per-turn constants of one conversation."""

    conversation_id: str
    agent_id: str = "default"
    autonomy: Autonomy = Autonomy.SUPERVISED
    is_sub_agent: bool = False
    tool_policies: Mapping[str, ApprovalRule] = field(default_factory=dict)
    allowlist: frozenset[str] = frozenset()
    """Tools the person granted ``always`` to this agent, as of the turn's start."""
    limits: LoopLimits = field(default_factory=LoopLimits)
