"""``think``: a scratchpad for reasoning (seed 002). Records the thought; no side effects."""

from __future__ import annotations

from pydantic import Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.types import SessionRef, ToolOutput


class ThinkArgs(ToolArgs):
    thought: str = Field(min_length=1, description="Your reasoning, plan or notes.")


class ThinkTool(TypedTool[ThinkArgs]):
    def __init__(self) -> None:
        super().__init__(
            ThinkArgs,
            make_definition(
                "think",
                "Think step by step before acting. The thought is recorded in the conversation; "
                "nothing else happens.",
                ThinkArgs,
                timeout_seconds=5.0,
            ),
        )

    async def run(self, args: ThinkArgs, session: SessionRef) -> ToolOutput:
        return ToolOutput(
            content=f"thought recorded ({len(args.thought)} characters)",
            structured={"thought": args.thought},
        )
