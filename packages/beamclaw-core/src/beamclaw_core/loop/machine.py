"""The pure agentic-loop machine: ``transition(state, context, event) -> Transition``.

Invariants (property-tested):

1. Deterministic: no I/O, clock, randomness or logging here (a test checks the imports);
   time and ids arrive inside events.
2. History validity: every assistant tool call persisted by a transition is answered by
   exactly one tool result, in order — by the tool, or by a synthetic result when it was
   denied, cancelled, timed out, cut by a limit or interrupted by a restart.
3. Tools run serially: at most one ``ExecuteTool`` is outstanding, in the model's order.
4. Retries are bounded by ``max_attempts``; Auth/InvalidRequest never retry; a context
   overflow compacts and retries once.
5. Every turn ends in ``Idle`` or ``Error`` with exactly one terminal client event.

:data:`TABLE` is the whole transition table as data: ``(state type, event type) ->
handler``. A pair not in it raises :class:`IllegalTransition`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from beamclaw_core.kinds import ErrorKind
from beamclaw_core.loop.context import LoopContext
from beamclaw_core.loop.effects import (
    AllowTool,
    CancelOperation,
    CancelSubAgents,
    Compact,
    Effect,
    MeasureContext,
    NotifyClient,
    PersistMessage,
    RequestApproval,
    RequestLlm,
    ScheduleRetry,
)
from beamclaw_core.loop.errors import IllegalTransition
from beamclaw_core.loop.inputs import (
    ApprovalDecision,
    Cancel,
    CompactionDone,
    ContextMeasured,
    Input,
    Interrupted,
    LlmChunk,
    LlmError,
    LlmResponse,
    OperationCancelled,
    RetryTimer,
    SubAgentResult,
    ToolComplete,
    TurnDeadline,
    UserMessage,
)
from beamclaw_core.loop.states import (
    AwaitingApproval,
    AwaitingLlm,
    AwaitingSubAgents,
    Cancelling,
    Compacting,
    Error,
    Idle,
    LlmRequesting,
    State,
    SubAgentOutcome,
    ToolExecuting,
    Turn,
)
from beamclaw_core.loop.steps import (
    Transition,
    done,
    end_with_limit,
    finished,
    join_text,
    next_tool,
    pending_calls,
    persist_synthetic,
    said_if_empty,
    screened,
    start_call,
    subagent_report,
    synthetic_results,
    tool_message,
)
from beamclaw_core.loop.turn_events import (
    Accepted,
    ApprovalRequested,
    ApprovalResolved,
    Cancelled,
    Compacted,
    Retrying,
    TextChunk,
    TurnError,
)

Handler = Callable[[Any, LoopContext, Any], Transition]

CANCELLED_CURRENT = "Cancelled by user"
CANCELLED_REST = "Skipped due to cancellation"


def transition(state: State, context: LoopContext, event: Input) -> Transition:
    """The next state and the effects to run. Raises :class:`IllegalTransition`."""
    handler = TABLE.get((type(state), type(event)))
    if handler is None:
        raise IllegalTransition(type(state).__name__, type(event).__name__, _refusal(state, event))
    return handler(state, context, event)


def _refusal(state: State, event: Input) -> str:
    if isinstance(event, UserMessage):
        if isinstance(state, Cancelling):
            return "cancellation in progress"
        return "agent is busy"
    return "not expected in this state"


# ---------------------------------------------------------------- turn start


def _start(state: Idle | Error, ctx: LoopContext, ev: UserMessage) -> Transition:
    """Start a turn: persist the user message, then measure the context (or stop at the budget)."""
    turn = Turn(
        turn_id=ev.turn_id,
        started_at=ev.ts,
        budget_remaining_usd=ev.budget_remaining_usd,
        requested_model=ev.model,
    )
    effects: list[Effect] = [
        PersistMessage(ev.message),
        NotifyClient(Accepted(ctx.conversation_id, turn.turn_id)),
    ]
    if ev.budget_remaining_usd is not None and ev.budget_remaining_usd <= 0:
        return end_with_limit(
            ctx,
            turn,
            "daily_cost_budget",
            "I have reached today's cost budget for this agent, so I cannot answer until "
            "it resets.",
            effects,
        )
    effects.append(MeasureContext())
    return Transition(AwaitingLlm(turn=turn), tuple(effects))


def _measured(state: AwaitingLlm, ctx: LoopContext, ev: ContextMeasured) -> Transition:
    """Compact when the estimate crosses compaction_threshold_pct, else request the LLM."""
    threshold = ctx.limits.compaction_threshold_pct
    if ev.window > 0 and ev.tokens * 100 >= ev.window * threshold:
        return Transition(Compacting(turn=state.turn, reason="threshold"), (Compact("threshold"),))
    return Transition(LlmRequesting(turn=state.turn, attempt=1), (RequestLlm(1),))


def _compacted(state: Compacting, ctx: LoopContext, ev: CompactionDone) -> Transition:
    """Tell the client, then request the LLM."""
    note = Compacted(
        ctx.conversation_id,
        state.turn.turn_id,
        ev.before_tokens,
        ev.after_tokens,
        ev.summarized_messages,
        ev.fallback,
    )
    return Transition(
        LlmRequesting(turn=state.turn, attempt=state.attempt),
        (NotifyClient(note), RequestLlm(state.attempt)),
    )


# ---------------------------------------------------------------- LLM


def _chunk(state: LlmRequesting, ctx: LoopContext, ev: LlmChunk) -> Transition:
    """Stream answer text to the client."""
    if not ev.text:
        return Transition(state)
    text = ev.text
    new_state: LlmRequesting = state
    if not state.streamed:
        new_state = state.model_copy(update={"streamed": True})
        if state.turn.text:
            text = "\n\n" + text
    return Transition(
        new_state, (NotifyClient(TextChunk(ctx.conversation_id, state.turn.turn_id, text)),)
    )


def _response(state: LlmRequesting, ctx: LoopContext, ev: LlmResponse) -> Transition:
    """Persist the answer; finish, run its tools serially, or stop at a limit."""
    msg = said_if_empty(ev.message)
    turn = state.turn.model_copy(
        update={
            "usage": state.turn.usage + ev.usage,
            "model": ev.model or state.turn.model,
            "text": join_text(state.turn.text, msg.text),
        }
    )
    calls = msg.tool_calls
    effects: list[Effect] = [PersistMessage(msg)]
    limits = ctx.limits
    limit: tuple[str, str] | None = None
    cost = turn.usage.cost_usd
    if (
        limits.max_tokens_per_turn is not None
        and turn.usage.total_tokens > limits.max_tokens_per_turn
    ):
        limit = (
            "max_tokens_per_turn",
            (
                f"I stopped: this turn used {turn.usage.total_tokens} tokens, over the limit of "
                f"{limits.max_tokens_per_turn} per turn."
            ),
        )
    elif (
        turn.budget_remaining_usd is not None
        and cost is not None
        and (cost >= turn.budget_remaining_usd)
    ):
        limit = (
            "daily_cost_budget",
            (
                f"I stopped: this turn cost ${cost:.4f} and reached today's cost budget for "
                "this agent."
            ),
        )
    elif calls and turn.iterations >= limits.max_tool_iterations:
        limit = (
            "max_tool_iterations",
            (
                f"I stopped: this turn reached the limit of {limits.max_tool_iterations} tool "
                "iterations. Ask me to continue if you want me to go on."
            ),
        )
    if limit is not None:
        effects.extend(
            persist_synthetic(
                synthetic_results(calls, f"Not run: the {limit[0]} limit was reached.")
            )
        )
        return end_with_limit(ctx, turn, limit[0], limit[1], effects)
    if not calls:
        return done(ctx, turn, effects)
    turn = turn.model_copy(update={"iterations": turn.iterations + 1})
    return next_tool(ctx, turn, calls, (), effects)


def _llm_error(state: LlmRequesting, ctx: LoopContext, ev: LlmError) -> Transition:
    """Retry with backoff (bounded), compact once on overflow, or fail to Error."""
    turn, limits = state.turn, ctx.limits
    if ev.kind is ErrorKind.CONTEXT_OVERFLOW:
        if not turn.overflow_compacted:
            return Transition(
                Compacting(
                    turn=turn.model_copy(update={"overflow_compacted": True}),
                    reason="overflow",
                    attempt=state.attempt,
                ),
                (Compact("overflow"),),
            )
        return _fail(
            ctx,
            turn,
            ev.kind.value,
            f"The conversation is still too long for the model after compaction: {ev.message}",
        )
    if ev.kind.retryable and state.attempt < limits.max_attempts:
        if ev.retry_after is not None:
            delay = max(0.0, min(ev.retry_after, limits.retry_after_cap))
        else:
            delay = min(limits.retry_base_delay * 2 ** (state.attempt - 1), limits.retry_max_delay)
        nxt = state.attempt + 1
        return Transition(
            LlmRequesting(turn=turn, attempt=nxt, waiting_retry=True),
            (
                ScheduleRetry(delay, nxt),
                NotifyClient(
                    Retrying(
                        ctx.conversation_id,
                        turn.turn_id,
                        nxt,
                        delay,
                        ev.kind.value,
                        ev.message,
                        discard_partial=state.streamed,
                    )
                ),
            ),
        )
    if ev.kind.retryable:
        return _fail(
            ctx, turn, ev.kind.value, f"Failed after {state.attempt} attempts: {ev.message}"
        )
    return _fail(ctx, turn, ev.kind.value, ev.message)


def _fail(ctx: LoopContext, turn: Turn, kind: str, message: str) -> Transition:
    """End the turn in Error and tell the client."""
    return Transition(
        Error(error_kind=kind, message=message),
        (NotifyClient(TurnError(ctx.conversation_id, turn.turn_id, kind, message)),),
    )


def _retry(state: LlmRequesting, ctx: LoopContext, ev: RetryTimer) -> Transition:
    """The backoff elapsed: request the LLM again (same attempt number)."""
    if not state.waiting_retry or ev.attempt != state.attempt:
        raise IllegalTransition("LlmRequesting", "RetryTimer", "no retry of that attempt is due")
    return Transition(
        state.model_copy(update={"waiting_retry": False, "streamed": False}),
        (RequestLlm(state.attempt),),
    )


# ---------------------------------------------------------------- tools, approvals, sub-agents


def _tool_done(state: ToolExecuting, ctx: LoopContext, ev: ToolComplete) -> Transition:
    """Persist the result; start the next tool or ask the LLM again."""
    if ev.result.tool_call_id != state.current.id:
        raise IllegalTransition("ToolExecuting", "ToolComplete", "result of another tool call")
    result = screened(ev.result, ctx.limits.images)
    effects: list[Effect] = [
        PersistMessage(tool_message(result)),
        finished(ctx, state.turn, result),
    ]
    # the images are stored with the message: the state keeps the results without them
    kept = result.model_copy(update={"parts": ()}) if result.parts else result
    return next_tool(ctx, state.turn, state.remaining, (*state.completed, kept), effects)


def _approval(state: AwaitingApproval, ctx: LoopContext, ev: ApprovalDecision) -> Transition:
    """Run the tool (yes/always) or answer it with a denial (no/timeout)."""
    if ev.request_id != state.request_id:
        raise IllegalTransition("AwaitingApproval", "ApprovalDecision", "unknown request id")
    call, turn = state.pending, state.turn
    effects: list[Effect] = [
        NotifyClient(
            ApprovalResolved(
                ctx.conversation_id, turn.turn_id, state.request_id, call.name, ev.decision
            )
        )
    ]
    if ev.decision in ("yes", "always"):
        if ev.decision == "always":
            turn = turn.model_copy(update={"allowed": (*turn.allowed, call.name)})
            effects.append(AllowTool(call.name))
        started = start_call(ctx, turn, call, state.remaining, state.completed, effects)
        if isinstance(started, Transition):
            return started
        result = started
    else:
        text = (
            f"Denied: the user did not approve {call.name}."
            if ev.decision == "no"
            else f"Denied: nobody approved {call.name} within {ctx.limits.approval_timeout:g} s."
        )
        result = synthetic_results((call,), text)[0]
    effects += [PersistMessage(tool_message(result)), finished(ctx, turn, result)]
    return next_tool(ctx, turn, state.remaining, (*state.completed, result), effects)


def _subagent(state: AwaitingSubAgents, ctx: LoopContext, ev: SubAgentResult) -> Transition:
    """Collect a child result; when all are in, answer spawn_agents."""
    if ev.child_id not in state.pending:
        raise IllegalTransition("AwaitingSubAgents", "SubAgentResult", "not a pending child")
    outcomes = (
        *state.outcomes,
        SubAgentOutcome(child_id=ev.child_id, result=ev.result, success=ev.success),
    )
    pending = tuple(c for c in state.pending if c != ev.child_id)
    if pending:
        return Transition(state.model_copy(update={"pending": pending, "outcomes": outcomes}))
    report = subagent_report(outcomes, state.children).model_copy(
        update={"tool_call_id": state.call.id}
    )
    effects: list[Effect] = [
        PersistMessage(tool_message(report)),
        finished(ctx, state.turn, report),
    ]
    return next_tool(ctx, state.turn, state.remaining, (*state.completed, report), effects)


# ---------------------------------------------------------------- cancel, deadline, restart


def _cancel_inflight(
    state: AwaitingLlm | Compacting | LlmRequesting, ctx: LoopContext, ev: Cancel
) -> Transition:
    """Stop the in-flight LLM call/compaction; the turn ends when it has stopped."""
    return Transition(Cancelling(turn=state.turn, reason=ev.reason), (CancelOperation(ack=True),))


def _cancel_tools(
    state: ToolExecuting | AwaitingApproval | AwaitingSubAgents, ctx: LoopContext, ev: Cancel
) -> Transition:
    """Synthetic results for the current and remaining tools; the turn ends."""
    effects = _abandon(
        state, CANCELLED_CURRENT if ev.reason == CANCELLED_CURRENT else ev.reason, CANCELLED_REST
    )
    effects.append(NotifyClient(Cancelled(ctx.conversation_id, state.turn.turn_id, ev.reason)))
    return Transition(Idle(), tuple(effects))


def _abandon(
    state: ToolExecuting | AwaitingApproval | AwaitingSubAgents, first: str, rest: str
) -> list[Effect]:
    effects: list[Effect] = [CancelOperation(ack=False)]
    if isinstance(state, AwaitingSubAgents):
        effects.append(CancelSubAgents(state.pending))
    effects.extend(persist_synthetic(synthetic_results(pending_calls(state), first, rest)))
    return effects


def _cancelled(state: Cancelling, ctx: LoopContext, ev: OperationCancelled) -> Transition:
    """The operation stopped: the turn ends (cancelled, or by a limit)."""
    if state.limit is not None:
        return end_with_limit(ctx, state.turn, state.limit, state.reason, [])
    return Transition(
        Idle(), (NotifyClient(Cancelled(ctx.conversation_id, state.turn.turn_id, state.reason)),)
    )


def _deadline_inflight(
    state: AwaitingLlm | Compacting | LlmRequesting, ctx: LoopContext, ev: TurnDeadline
) -> Transition:
    """Turn time limit: stop the in-flight operation, then end with a notice."""
    return Transition(
        Cancelling(turn=state.turn, reason=_deadline_text(ev), limit="turn_timeout"),
        (CancelOperation(ack=True),),
    )


def _deadline_tools(
    state: ToolExecuting | AwaitingApproval | AwaitingSubAgents, ctx: LoopContext, ev: TurnDeadline
) -> Transition:
    """Turn time limit: synthetic results for pending tools, end with a notice."""
    effects = _abandon(
        state,
        "Not run: the turn time limit was reached.",
        "Not run: the turn time limit was reached.",
    )
    return end_with_limit(ctx, state.turn, "turn_timeout", _deadline_text(ev), effects)


def _deadline_text(ev: TurnDeadline) -> str:
    return f"I stopped: this turn reached its time limit of {ev.seconds:g} seconds."


def _interrupted(state: State, ctx: LoopContext, ev: Interrupted) -> Transition:
    """After a restart: a pending approval is asked again; other pending tools are answered synthetically; resume or end the turn."""
    if isinstance(state, Idle | Error):
        return Transition(state)
    if isinstance(state, AwaitingApproval):
        return _ask_again(state, ctx)
    turn = state.turn
    if isinstance(state, Cancelling):
        return _cancelled(state, ctx, OperationCancelled())
    effects: list[Effect] = []
    if isinstance(state, ToolExecuting | AwaitingApproval | AwaitingSubAgents):
        text = f"Interrupted: {ev.reason}. The tool may or may not have completed."
        effects = _abandon(state, text, f"Not run: {ev.reason}.")
    if ev.resume:
        effects.append(MeasureContext())
        return Transition(AwaitingLlm(turn=turn), tuple(effects))
    effects.append(
        NotifyClient(
            TurnError(
                ctx.conversation_id,
                turn.turn_id,
                "interrupted",
                f"The turn was interrupted: {ev.reason}.",
            )
        )
    )
    return Transition(Idle(), tuple(effects))


def _ask_again(state: AwaitingApproval, ctx: LoopContext) -> Transition:
    """A question to the person outlives a restart: the same request (same id, so an
    answer already on its way still matches) with a fresh timeout; nothing has run."""
    call, limit = state.pending, ctx.limits.approval_timeout
    request = ApprovalRequested(
        ctx.conversation_id, state.turn.turn_id, state.request_id, call.name, call.args, limit
    )
    return Transition(
        state, (NotifyClient(request), RequestApproval(state.request_id, call, limit))
    )


def _ignore(state: State, ctx: LoopContext, ev: Input) -> Transition:
    """Stale timers/results after the operation ended: no change, no effect."""
    return Transition(state)


# ---------------------------------------------------------------- the table

_INFLIGHT = (AwaitingLlm, Compacting, LlmRequesting)
_TOOLISH = (ToolExecuting, AwaitingApproval, AwaitingSubAgents)
_ALL = (Idle, Error, Cancelling, *_INFLIGHT, *_TOOLISH)


def _build() -> Mapping[tuple[type, type], Handler]:
    t: dict[tuple[type, type], Handler] = {
        (Idle, UserMessage): _start,
        (Error, UserMessage): _start,
        (AwaitingLlm, ContextMeasured): _measured,
        (Compacting, CompactionDone): _compacted,
        (LlmRequesting, LlmChunk): _chunk,
        (LlmRequesting, LlmResponse): _response,
        (LlmRequesting, LlmError): _llm_error,
        (LlmRequesting, RetryTimer): _retry,
        (ToolExecuting, ToolComplete): _tool_done,
        (AwaitingApproval, ApprovalDecision): _approval,
        (AwaitingSubAgents, SubAgentResult): _subagent,
        (Cancelling, OperationCancelled): _cancelled,
        (Idle, Cancel): _ignore,
        (Error, Cancel): _ignore,
        (Cancelling, Cancel): _ignore,
        (Idle, TurnDeadline): _ignore,
        (Error, TurnDeadline): _ignore,
        (Cancelling, TurnDeadline): _ignore,
    }
    for s in _INFLIGHT:
        t[(s, Cancel)] = _cancel_inflight
        t[(s, TurnDeadline)] = _deadline_inflight
    for s in _TOOLISH:
        t[(s, Cancel)] = _cancel_tools
        t[(s, TurnDeadline)] = _deadline_tools
    for s in _ALL:
        t[(s, Interrupted)] = _interrupted
    for ev in (LlmChunk, LlmResponse, LlmError, RetryTimer, ContextMeasured, CompactionDone):
        t[(Cancelling, ev)] = _ignore
    return t


TABLE: Mapping[tuple[type, type], Handler] = _build()
"""Every legal ``(state type, event type)`` pair and the handler computing the transition."""


def table_rows() -> list[tuple[str, str, str]]:
    """The table as ``(state, event, handler doc)`` rows, for docs and inspection."""
    rows: list[tuple[str, str, str]] = []
    for (s, e), h in TABLE.items():
        doc = (h.__doc__ or h.__name__.strip("_")).strip().splitlines()[0]
        rows.append((s.__name__, e.__name__, doc))
    return sorted(rows)
