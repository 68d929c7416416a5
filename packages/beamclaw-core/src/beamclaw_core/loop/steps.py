"""Pure building blocks of the transition function: tool dispatch, endings, results.

Shared by :mod:`beamclaw_core.loop.machine`. No I/O, clock, randomness or logging: ids
are derived by hashing values that arrived in events.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from beamclaw_core.attachments import ImageLimits, screen_tool_images
from beamclaw_core.loop.context import SPAWN_AGENTS_TOOL, SUBMIT_RESULT_TOOL, LoopContext
from beamclaw_core.loop.effects import (
    Effect,
    ExecuteTool,
    MeasureContext,
    NotifyClient,
    PersistMessage,
    RequestApproval,
    SpawnSubAgents,
    SubAgentTask,
    SubmitResult,
)
from beamclaw_core.loop.states import (
    AwaitingApproval,
    AwaitingLlm,
    AwaitingSubAgents,
    Idle,
    State,
    SubAgentOutcome,
    ToolExecuting,
    Turn,
)
from beamclaw_core.loop.turn_events import (
    ApprovalRequested,
    ApprovalResolved,
    LimitReached,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from beamclaw_core.messages import Message
from beamclaw_tools.types import (
    Autonomy,
    ContentPart,
    ImagePart,
    TextPart,
    ToolCall,
    ToolResult,
)

PREVIEW_CHARS = 300
EMPTY_REPLY_TEXT = "The model returned an empty reply."
"""Said instead of a blank answer, and stored in its place (no blank assistant message)."""


@dataclass(frozen=True, slots=True)
class Transition:
    """The result of one transition: the state to persist and the effects to run, in order."""

    new_state: State
    effects: tuple[Effect, ...] = ()


def join_text(before: str, more: str) -> str:
    """Join the turn's answer text with the next step's text (blank line between)."""
    if not more:
        return before
    if not before:
        return more
    return f"{before}\n\n{more}"


def said_if_empty(message: Message) -> Message:
    """``message``, or when it is a final reply with neither text nor tool calls, the same
    reply (usage, model, reasoning kept) saying :data:`EMPTY_REPLY_TEXT`, marked
    ``meta["empty_reply"]``: the user is told, and the history holds no blank message."""
    if message.tool_calls or message.text.strip():
        return message
    return message.model_copy(
        update={"content": EMPTY_REPLY_TEXT, "meta": {**message.meta, "empty_reply": True}}
    )


def screened(result: ToolResult, limits: ImageLimits) -> ToolResult:
    """``result`` with only the images ``limits`` accept in ``parts``; each one refused
    is a note at the end of ``content`` instead (:func:`screen_tool_images`)."""
    if not result.parts:
        return result
    images, notes = screen_tool_images(result.parts, limits, tool=result.name)
    content = "\n".join((result.content, *notes)) if result.content else "\n".join(notes)
    return result.model_copy(update={"content": content, "parts": images})


def tool_message(result: ToolResult, *, synthetic: bool = False) -> Message:
    """The tool message answering ``result``'s call: its text, then the images of its
    ``parts`` (already :func:`screened`)."""
    meta: dict[str, Any] = {"synthetic": True} if synthetic else {}
    if result.structured is not None:
        meta["structured"] = result.structured
    images = tuple(p for p in result.parts if isinstance(p, ImagePart))
    content: str | tuple[ContentPart, ...] = (
        (TextPart(text=result.content), *images) if images else result.content
    )
    return Message.tool(
        result.tool_call_id, result.name, content, is_error=result.is_error, meta=meta
    )


def synthetic_results(
    calls: Sequence[ToolCall], first: str, rest: str | None = None
) -> list[ToolResult]:
    """Error results for calls that never ran (REQ-BED-005): ``first`` for the first call,
    ``rest`` (default ``first``) for the others."""
    out: list[ToolResult] = []
    for i, call in enumerate(calls):
        text = first if i == 0 or rest is None else rest
        out.append(ToolResult(tool_call_id=call.id, name=call.name, content=text, is_error=True))
    return out


def persist_synthetic(results: Sequence[ToolResult]) -> list[Effect]:
    return [PersistMessage(tool_message(r, synthetic=True)) for r in results]


def finished(ctx: LoopContext, turn: Turn, result: ToolResult) -> NotifyClient:
    return NotifyClient(
        ToolFinished(
            ctx.conversation_id,
            turn.turn_id,
            call_id=result.tool_call_id,
            tool=result.name,
            is_error=result.is_error,
            preview=result.content[:PREVIEW_CHARS],
            images=tuple(p for p in result.parts if isinstance(p, ImagePart)),
            files=result.files,
        )
    )


def done(ctx: LoopContext, turn: Turn, effects: list[Effect]) -> Transition:
    """End the turn normally: the answer is every assistant text of the turn."""
    effects.append(
        NotifyClient(
            TurnDone(
                ctx.conversation_id,
                turn.turn_id,
                text=turn.text,
                usage=turn.usage,
                model=turn.model,
            )
        )
    )
    return Transition(Idle(), tuple(effects))


def end_with_limit(
    ctx: LoopContext, turn: Turn, limit: str, notice: str, effects: list[Effect]
) -> Transition:
    """End the turn because a bound was hit, telling the user which one (invariant 5)."""
    effects.append(PersistMessage(Message.assistant(notice, meta={"limit": limit})))
    effects.append(NotifyClient(LimitReached(ctx.conversation_id, turn.turn_id, limit, notice)))
    return done(ctx, turn.model_copy(update={"text": join_text(turn.text, notice)}), effects)


Verdict = Literal["run", "ask", "deny"]


def policy(ctx: LoopContext, turn: Turn, call: ToolCall) -> tuple[Verdict, str]:
    """Seed 001 approval workflow plus ``min_autonomy``; unknown tools run (and fail there)."""
    rule = ctx.tool_policies.get(call.name)
    if rule is None:
        return "run", ""
    if not ctx.autonomy.allows(rule.min_autonomy):
        return "deny", (
            f"Denied: {call.name} needs autonomy level {rule.min_autonomy.value}, "
            f"this agent runs at {ctx.autonomy.value}."
        )
    if not rule.requires_approval:
        return "run", ""
    if ctx.autonomy is Autonomy.READ_ONLY:  # before grants: a standing grant never lifts it
        return "deny", f"Denied: {call.name} needs approval and this agent is read-only."
    if call.name in ctx.allowlist or call.name in turn.allowed:
        return "run", ""
    if ctx.autonomy is Autonomy.FULL:
        return "run", ""
    return "ask", ""


def approval_request_id(turn: Turn, call: ToolCall) -> str:
    return f"{turn.turn_id}:{call.id}"


def child_id(ctx: LoopContext, turn: Turn, call: ToolCall, index: int) -> str:
    digest = hashlib.sha256(
        f"{ctx.conversation_id}:{turn.turn_id}:{call.id}:{index}".encode()
    ).hexdigest()
    return f"sub-{digest[:32]}"


def parse_tasks(call: ToolCall) -> tuple[list[tuple[str, str | None]], str | None]:
    """``spawn_agents`` arguments → ``[(task, agent_id)]`` or an error text."""
    if call.raw_args is not None:
        return [], "Error: spawn_agents arguments are not valid JSON."
    raw: object = call.args.get("tasks")
    if not isinstance(raw, list) or not raw:
        return [], "Error: spawn_agents needs a non-empty 'tasks' list."
    items: list[object] = list(raw)  # pyright: ignore[reportUnknownArgumentType]
    tasks: list[tuple[str, str | None]] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            tasks.append((item, None))
        elif isinstance(item, dict):
            entry: dict[str, object] = item  # pyright: ignore[reportUnknownVariableType]
            task = entry.get("task")
            agent = entry.get("agent")
            if not isinstance(task, str) or not task.strip():
                return [], "Error: every task needs a non-empty 'task' text."
            tasks.append((task, agent if isinstance(agent, str) and agent else None))
        else:
            return [], "Error: every task must be a text or an object with 'task'."
    return tasks, None


def subagent_report(outcomes: Sequence[SubAgentOutcome], order: Sequence[str]) -> ToolResult:
    by_id = {o.child_id: o for o in outcomes}
    payload = [
        {"agent": i + 1, "success": by_id[c].success, "result": by_id[c].result}
        for i, c in enumerate(order)
        if c in by_id
    ]
    return ToolResult(
        tool_call_id="",
        name=SPAWN_AGENTS_TOOL,
        content=json.dumps(payload, ensure_ascii=False),
        is_error=not any(o.success for o in outcomes),
    )


def start_call(
    ctx: LoopContext,
    turn: Turn,
    call: ToolCall,
    rest: tuple[ToolCall, ...],
    completed: tuple[ToolResult, ...],
    effects: list[Effect],
) -> Transition | ToolResult:
    """Start an approved call: a tool, sub-agents, or a result submission.

    Returns a :class:`ToolResult` instead when the call is answered on the spot (bad
    ``spawn_agents`` arguments, nested spawning, ``submit_result`` in a top conversation).
    """
    sid, tid = ctx.conversation_id, turn.turn_id
    if call.name == SPAWN_AGENTS_TOOL:
        if ctx.is_sub_agent:
            return _immediate(call, "Error: sub-agents cannot spawn sub-agents.")
        tasks, problem = parse_tasks(call)
        if problem is None and len(tasks) > ctx.limits.max_subagents:
            problem = f"Error: at most {ctx.limits.max_subagents} sub-agents per call."
        if problem is not None:
            return _immediate(call, problem)
        specs = tuple(
            SubAgentTask(child_id(ctx, turn, call, i), task, agent)
            for i, (task, agent) in enumerate(tasks)
        )
        effects.append(NotifyClient(ToolStarted(sid, tid, call.id, call.name, call.args)))
        effects.append(SpawnSubAgents(call.id, specs))
        pending = tuple(s.child_id for s in specs)
        return Transition(
            AwaitingSubAgents(
                turn=turn,
                call=call,
                pending=pending,
                children=pending,
                remaining=rest,
                completed=completed,
            ),
            tuple(effects),
        )
    if call.name == SUBMIT_RESULT_TOOL:
        if not ctx.is_sub_agent:
            return _immediate(call, "Error: only sub-agents can submit a result.")
        result = call.args.get("result")
        success = call.args.get("success", True)
        if call.raw_args is not None or not isinstance(result, str):
            return _immediate(call, "Error: submit_result needs a 'result' text.")
        accepted = ToolResult(tool_call_id=call.id, name=call.name, content="Result submitted.")
        effects.append(PersistMessage(tool_message(accepted)))
        effects.extend(
            persist_synthetic(synthetic_results(rest, "Skipped: the result was already submitted."))
        )
        effects.append(SubmitResult(result, success is not False))
        return done(ctx, turn.model_copy(update={"text": join_text(turn.text, result)}), effects)
    effects.append(NotifyClient(ToolStarted(sid, tid, call.id, call.name, call.args)))
    effects.append(ExecuteTool(call))
    return Transition(
        ToolExecuting(turn=turn, current=call, remaining=rest, completed=completed),
        tuple(effects),
    )


def _immediate(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(tool_call_id=call.id, name=call.name, content=text, is_error=True)


def next_tool(
    ctx: LoopContext,
    turn: Turn,
    queue: tuple[ToolCall, ...],
    completed: tuple[ToolResult, ...],
    effects: list[Effect],
) -> Transition:
    """Dispatch the next call of ``queue`` (serially), or ask the LLM again when none is left."""
    sid, tid = ctx.conversation_id, turn.turn_id
    while queue:
        call, rest = queue[0], queue[1:]
        verdict, reason = policy(ctx, turn, call)
        if verdict == "ask":
            request_id = approval_request_id(turn, call)
            effects.append(
                NotifyClient(
                    ApprovalRequested(
                        sid, tid, request_id, call.name, call.args, ctx.limits.approval_timeout
                    )
                )
            )
            effects.append(RequestApproval(request_id, call, ctx.limits.approval_timeout))
            return Transition(
                AwaitingApproval(
                    turn=turn,
                    request_id=request_id,
                    pending=call,
                    remaining=rest,
                    completed=completed,
                ),
                tuple(effects),
            )
        if verdict == "run":
            started = start_call(ctx, turn, call, rest, completed, effects)
            if isinstance(started, Transition):
                return started
            result = started
        else:
            effects.append(
                NotifyClient(
                    ApprovalResolved(sid, tid, approval_request_id(turn, call), call.name, "policy")
                )
            )
            result = ToolResult(tool_call_id=call.id, name=call.name, content=reason, is_error=True)
        effects.append(PersistMessage(tool_message(result)))
        effects.append(finished(ctx, turn, result))
        completed = (*completed, result)
        queue = rest
    effects.append(MeasureContext())
    return Transition(AwaitingLlm(turn=turn), tuple(effects))


def pending_calls(state: State) -> tuple[ToolCall, ...]:
    """Tool calls of ``state`` that still need a result, in order."""
    if isinstance(state, ToolExecuting):
        return (state.current, *state.remaining)
    if isinstance(state, AwaitingApproval):
        return (state.pending, *state.remaining)
    if isinstance(state, AwaitingSubAgents):
        return (state.call, *state.remaining)
    return ()
