"""Typed tools: a pydantic argument model is the single source of a tool's schema.

:class:`TypedTool` validates the model's arguments before :meth:`TypedTool.run` sees them
and turns a validation failure into a clear tool error (never an exception).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from beamclaw_tools.schemas import args_schema
from beamclaw_tools.types import Autonomy, SessionRef, ToolDef, ToolOutput


class ToolArgs(BaseModel):
    """Base of argument models: unknown arguments are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


A = TypeVar("A", bound=BaseModel)


def describe_validation_error(tool: str, error: ValidationError) -> str:
    """A short, model-readable list of what is wrong with the arguments."""
    problems: list[str] = []
    for item in error.errors(include_url=False):
        loc = ".".join(str(p) for p in item["loc"]) or "(arguments)"
        msg = item["msg"]
        if item["type"] == "missing":
            problems.append(f"{loc}: required argument is missing")
        elif item["type"] == "extra_forbidden":
            problems.append(f"{loc}: unknown argument")
        else:
            given = item.get("input")
            shown = repr(given) if isinstance(given, str | int | float | bool) else ""
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            problems.append(f"{loc}: {msg}" + (f" (got {shown})" if shown else ""))
    return f"invalid arguments for {tool}: " + "; ".join(problems)


def make_definition(
    name: str,
    description: str,
    args_model: type[BaseModel],
    *,
    requires_approval: bool = False,
    min_autonomy: Autonomy = Autonomy.READ_ONLY,
    timeout_seconds: float = 60.0,
    max_output_chars: int | None = None,
    source: str = "builtin",
) -> ToolDef:
    return ToolDef(
        name=name,
        description=description,
        parameters=args_schema(args_model),
        source=source,
        requires_approval=requires_approval,
        min_autonomy=min_autonomy,
        timeout_seconds=timeout_seconds,
        max_output_chars=max_output_chars,
    )


class TypedTool(ABC, Generic[A]):
    """A tool whose arguments are validated against ``args_model`` before running."""

    def __init__(self, args_model: type[A], definition: ToolDef) -> None:
        self.args_model = args_model
        self._definition = definition

    @property
    def definition(self) -> ToolDef:
        return self._definition

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        try:
            parsed = self.args_model.model_validate(args)
        except ValidationError as e:
            return ToolOutput.error(describe_validation_error(self._definition.name, e))
        return await self.run(parsed, session)

    @abstractmethod
    async def run(self, args: A, session: SessionRef) -> ToolOutput:
        """Run with validated arguments; expected failures return ``ToolOutput.error``."""
