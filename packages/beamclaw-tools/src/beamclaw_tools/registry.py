"""The tool registry: built-in, MCP and sandbox tools in one place (seed 001 ``bc_tool_registry``).

Invariants:

* Names are unique: registering a second tool with a taken name raises
  :class:`ToolNameCollisionError` (unless ``replace=True`` and the sources match, which is
  how an MCP server refreshes its own tools).
* :meth:`ToolRegistry.execute` never raises (except ``asyncio.CancelledError``, which it
  propagates after the tool cleaned up): unknown or ungranted tools, malformed JSON
  arguments, invalid arguments, timeouts and tool crashes all become error results.
* Every result is scrubbed (``beamclaw_obs.scrub``) and capped with an explicit
  truncation marker; ``tool_call_start`` / ``tool_call_result`` events carry scrubbed
  arguments only.

Approval and autonomy *decisions* are the loop's: ``ToolDef.requires_approval`` and
``ToolDef.min_autonomy`` only describe the policy.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from typing import Any, cast

from beamclaw_obs import EventType, emit, scrub, scrub_value
from beamclaw_tools.builtin import builtin_tools
from beamclaw_tools.errors import ToolNameCollisionError
from beamclaw_tools.memory_port import MemoryPort
from beamclaw_tools.netguard import Resolver, system_resolver
from beamclaw_tools.output import truncate
from beamclaw_tools.policy import ToolPolicy
from beamclaw_tools.schemas import anthropic_tool, openai_tool
from beamclaw_tools.settings import DEFAULT_MAX_OUTPUT_CHARS, ToolsSettings
from beamclaw_tools.types import SessionRef, Tool, ToolCall, ToolDef, ToolOutput, ToolResult


def decode_call_args(call: ToolCall) -> tuple[dict[str, Any] | None, str | None]:
    """``(args, None)`` or ``(None, error message)`` for a call's arguments."""
    if call.raw_args is None:
        return dict(call.args), None
    raw = call.raw_args
    if not raw.strip():
        return {}, None
    try:
        decoded = json.loads(raw)
    except json.JSONDecodeError as e:
        shown = raw if len(raw) <= 200 else raw[:200] + "..."
        return None, (
            f"arguments for {call.name} are not valid JSON ({e.msg} at position {e.pos}): {shown}"
        )
    if not isinstance(decoded, dict):
        kind = type(decoded).__name__
        return None, f"arguments for {call.name} must be a JSON object, got {kind}"
    return cast(dict[str, Any], decoded), None


_LISTED_POLICIES = 256
"""Distinct policies whose lists :meth:`ToolRegistry.definitions` remembers."""


class ToolRegistry:
    """Holds :class:`Tool` implementations keyed by name and runs calls safely."""

    def __init__(self, *, max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS) -> None:
        self._tools: dict[str, Tool] = {}
        self._max_output_chars = max_output_chars
        self._listed: dict[ToolPolicy | None, tuple[ToolDef, ...]] = {}
        """:meth:`definitions` per policy (policies are frozen, hence usable as keys);
        emptied whenever the set of tools changes. Every turn asks for the same list."""

    @classmethod
    def with_builtins(
        cls,
        settings: ToolsSettings | None = None,
        memory: MemoryPort | None = None,
        extra: Iterable[Tool] = (),
        resolver: Resolver = system_resolver,
    ) -> ToolRegistry:
        """A registry holding every built-in tool the settings enable, plus ``extra``."""
        settings = settings or ToolsSettings()
        registry = cls(max_output_chars=settings.max_output_chars)
        registry.register_many(builtin_tools(settings, memory, extra=extra, resolver=resolver))
        return registry

    # ------------------------------------------------------------------ membership
    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add a tool. Raises :class:`ToolNameCollisionError` when the name is taken.

        ``replace=True`` swaps a tool of the *same source* (an MCP server re-listing its
        tools); a name owned by another source is still refused.
        """
        definition = tool.definition
        existing = self._tools.get(definition.name)
        if existing is not None:
            old_source = existing.definition.source
            if not (replace and old_source == definition.source):
                raise ToolNameCollisionError(definition.name, old_source, definition.source)
        self._tools[definition.name] = tool
        self._listed.clear()

    def register_many(self, tools: Iterable[Tool]) -> None:
        """Register several tools; all or none (collisions are checked first)."""
        batch = list(tools)
        seen: dict[str, str] = {}
        for tool in batch:
            d = tool.definition
            if d.name in self._tools:
                taken = self._tools[d.name].definition.source
                raise ToolNameCollisionError(d.name, taken, d.source)
            if d.name in seen:
                raise ToolNameCollisionError(d.name, seen[d.name], d.source)
            seen[d.name] = d.source
        for tool in batch:
            self._tools[tool.definition.name] = tool
        self._listed.clear()

    def unregister(self, name: str) -> bool:
        """Remove a tool by name; True when it was registered."""
        self._listed.clear()
        return self._tools.pop(name, None) is not None

    def unregister_source(self, source: str) -> list[str]:
        """Remove every tool from ``source`` (e.g. ``mcp:time`` went down); their names."""
        gone = sorted(n for n, t in self._tools.items() if t.definition.source == source)
        for name in gone:
            del self._tools[name]
        self._listed.clear()
        return gone

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    # ------------------------------------------------------------------ export
    def definitions(self, policy: ToolPolicy | None = None) -> list[ToolDef]:
        """Definitions the policy permits, sorted by name."""
        return list(self.listed(policy))

    def listed(self, policy: ToolPolicy | None = None) -> tuple[ToolDef, ...]:
        """:meth:`definitions` as a tuple that stays the same object until the tools
        change, so a caller may cache what it derives from it by identity."""
        listed = self._listed.get(policy)
        if listed is None:
            listed = tuple(
                self._tools[n].definition
                for n in sorted(self._tools)
                if policy is None or policy.permits(n)
            )
            if len(self._listed) >= _LISTED_POLICIES:
                self._listed.clear()
            self._listed[policy] = listed
        return listed

    def openai_schemas(self, policy: ToolPolicy | None = None) -> list[dict[str, Any]]:
        return [openai_tool(d) for d in self.definitions(policy)]

    def anthropic_schemas(self, policy: ToolPolicy | None = None) -> list[dict[str, Any]]:
        return [anthropic_tool(d) for d in self.definitions(policy)]

    # ------------------------------------------------------------------ execution
    async def execute(
        self, call: ToolCall, session: SessionRef, *, policy: ToolPolicy | None = None
    ) -> ToolResult:
        """Run one call: validate, time-limit, scrub, cap, emit events. Never raises."""
        started = time.monotonic()
        args, problem = decode_call_args(call)
        shown_args: Any = scrub_value(args) if args is not None else scrub(call.raw_args or "")
        emit(
            EventType.TOOL_CALL_START,
            tool_name=call.name,
            tool_call_id=call.id,
            args=shown_args,
            session_id=session.session_id,
            agent_id=session.agent_id,
        )
        tool = self._tools.get(call.name)
        if tool is None or (policy is not None and not policy.permits(call.name)):
            output = ToolOutput.error(self._unknown_message(call.name, policy))
        elif problem is not None or args is None:
            output = ToolOutput.error(problem or f"arguments for {call.name} are missing")
        else:
            output = await self._run(tool, args, session)
        limit = (tool.definition.max_output_chars if tool is not None else None) or (
            self._max_output_chars
        )
        result = ToolResult(
            tool_call_id=call.id,
            name=call.name,
            content=truncate(scrub(output.content), limit, keep_tail=True),
            is_error=output.is_error,
            parts=output.parts,
            files=output.files,
            structured=cast(dict[str, Any], scrub_value(output.structured))
            if output.structured is not None
            else None,
        )
        emit(
            EventType.TOOL_CALL_RESULT,
            tool_name=call.name,
            tool_call_id=call.id,
            duration_ms=round((time.monotonic() - started) * 1000, 3),
            success=not result.is_error,
            session_id=session.session_id,
            agent_id=session.agent_id,
        )
        return result

    async def _run(self, tool: Tool, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        definition = tool.definition
        scope = asyncio.timeout(definition.timeout_seconds)
        try:
            async with scope:
                return await tool.execute(args, session)
        except TimeoutError:
            if scope.expired():
                return ToolOutput.error(
                    f"tool {definition.name} timed out after {definition.timeout_seconds:g} s "
                    "and was stopped"
                )
            return ToolOutput.error(f"tool {definition.name} failed: timeout inside the tool")
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a tool crash becomes a tool error, never a loop crash
            return ToolOutput.error(f"tool {definition.name} failed: {type(e).__name__}: {e}")

    def _unknown_message(self, name: str, policy: ToolPolicy | None) -> str:
        available = [d.name for d in self.definitions(policy)]
        listing = ", ".join(available) if available else "none"
        return f"unknown tool {name!r}; available tools: {listing}"
