"""The ``/context`` breakdown: where a model's context window goes.

Five parts — bootstrap (every system-prompt section except skills: workspace files,
daily logs, environment, fallback), skills, tools (definitions sent with each request),
history (the messages) and free. Token counts are estimates (:mod:`.tokens`).

Invariant: ``bootstrap + skills + tools + history + free == window + over_by``, with
``free == 0`` whenever ``over_by > 0`` and ``over_by == 0`` whenever ``free > 0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from beamclaw_core.messages import Message
from beamclaw_core.workspace.prompt import SystemPrompt
from beamclaw_core.workspace.sections import SectionKind
from beamclaw_core.workspace.tokens import (
    estimate_messages_tokens,
    estimate_tokens,
    estimate_tool_tokens,
)
from beamclaw_tools import ToolDef


@dataclass(frozen=True, slots=True)
class ContextBreakdown:
    """Estimated tokens per part of the context window."""

    window: int
    bootstrap: int
    skills: int
    tools: int
    history: int
    free: int
    over_by: int = 0
    """Tokens beyond the window (the next request would overflow; compaction is due)."""

    @property
    def used(self) -> int:
        return self.bootstrap + self.skills + self.tools + self.history

    def rows(self) -> tuple[tuple[str, int], ...]:
        """``(part, tokens)`` for the five parts, in display order."""
        return (
            ("bootstrap", self.bootstrap),
            ("skills", self.skills),
            ("tools", self.tools),
            ("history", self.history),
            ("free", self.free),
        )

    def render(self) -> str:
        """A small text table for chat channels (``/context``)."""
        lines = [f"Context window: {self.window:,} tokens (estimated)"]
        for part, tokens in self.rows():
            share = 100.0 * tokens / self.window if self.window else 0.0
            lines.append(f"  {part:<10}{tokens:>10,}  {share:5.1f}%")
        if self.over_by:
            lines.append(f"  over by  {self.over_by:>10,}  (the next turn compacts first)")
        return "\n".join(lines)


def context_breakdown(
    *,
    system_prompt: SystemPrompt | None,
    tools: Sequence[ToolDef],
    history: Sequence[Message],
    context_window: int,
) -> ContextBreakdown:
    """Estimate how ``context_window`` tokens divide between the parts of a request.

    Raises:
        ValueError: ``context_window`` is not positive.
    """
    if context_window <= 0:
        raise ValueError("context_window must be positive")
    bootstrap = skills = 0
    if system_prompt is not None:
        for section in system_prompt.sections:
            tokens = estimate_tokens(section.text)
            if section.kind is SectionKind.SKILLS:
                skills += tokens
            else:
                bootstrap += tokens
    tool_tokens = sum(estimate_tool_tokens(t) for t in tools)
    history_tokens = estimate_messages_tokens(history)
    used = bootstrap + skills + tool_tokens + history_tokens
    return ContextBreakdown(
        window=context_window,
        bootstrap=bootstrap,
        skills=skills,
        tools=tool_tokens,
        history=history_tokens,
        free=max(0, context_window - used),
        over_by=max(0, used - context_window),
    )
