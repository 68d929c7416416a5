"""Property tests of the pure machine (DESIGN.md §3 invariants 1-5).

A small simulated world answers each effect with an event drawn by hypothesis, and
injects cancels, deadlines, LLM errors, approval answers, sub-agent results and loop
restarts at random points. After every turn the persisted history must be valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beamclaw_core.loop import (
    SPAWN_AGENTS_TOOL,
    ApprovalRule,
    IllegalTransition,
    LoopContext,
    LoopLimits,
    Transition,
    transition,
)
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop import inputs as ev
from beamclaw_core.loop.history import history_problems
from beamclaw_core.loop.states import (
    AwaitingLlm,
    Cancelling,
    Compacting,
    Error,
    Idle,
    LlmRequesting,
    State,
    ToolExecuting,
    Turn,
    is_busy,
    recovery_form,
    state_from_json,
    state_to_json,
)
from beamclaw_core.loop.turn_events import Retrying, TurnEvent
from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers.base import ErrorKind
from beamclaw_tools import Autonomy, ToolCall, ToolResult

TOOLS = ("read", "write", "shell", SPAWN_AGENTS_TOOL)
POLICIES = {
    "read": ApprovalRule(),
    "write": ApprovalRule(requires_approval=True, min_autonomy=Autonomy.SUPERVISED),
    "shell": ApprovalRule(requires_approval=True, min_autonomy=Autonomy.FULL),
}


def ctx_for(autonomy: Autonomy, *, sub: bool = False, max_iter: int = 4) -> LoopContext:
    return LoopContext(
        conversation_id="c1",
        autonomy=autonomy,
        is_sub_agent=sub,
        tool_policies=POLICIES,
        limits=LoopLimits(max_tool_iterations=max_iter, max_attempts=3, approval_timeout=5),
    )


@dataclass
class World:
    ctx: LoopContext
    state: State = field(default_factory=Idle)
    history: list[Message] = field(default_factory=list)
    notices: list[TurnEvent] = field(default_factory=list)
    outstanding: list[object] = field(default_factory=list)
    executed: list[str] = field(default_factory=list)
    llm_calls: int = 0
    attempts_seen: list[int] = field(default_factory=list)
    persisted: State = field(default_factory=Idle)
    """The state as the executor commits it: only when a transition appends messages or
    changes the state's recovery form. A restart resumes from this, not from ``state``."""

    def apply(self, event: ev.Input) -> Transition:
        result = transition(self.state, self.ctx, event)
        again = transition(self.state, self.ctx, event)
        assert again == result, "transition must be deterministic"
        appends = any(isinstance(e, fx.PersistMessage) for e in result.effects)
        if appends or recovery_form(result.new_state) != recovery_form(self.state):
            self.persisted = result.new_state
        self.state = result.new_state
        assert state_from_json(state_to_json(self.state)) == self.state
        for e in result.effects:
            if isinstance(e, fx.PersistMessage):
                self.history.append(e.message)
            elif isinstance(e, fx.NotifyClient):
                self.notices.append(e.event)
            elif isinstance(e, fx.CancelOperation):
                self.outstanding = [o for o in self.outstanding if isinstance(o, fx.SpawnSubAgents)]
                if e.ack:
                    self.outstanding.append(e)
            elif isinstance(e, fx.CancelSubAgents):
                self.outstanding = [
                    o for o in self.outstanding if not isinstance(o, fx.SpawnSubAgents)
                ]
            elif isinstance(
                e,
                (
                    fx.MeasureContext,
                    fx.Compact,
                    fx.RequestLlm,
                    fx.ScheduleRetry,
                    fx.ExecuteTool,
                    fx.RequestApproval,
                    fx.SpawnSubAgents,
                ),
            ):
                if isinstance(e, fx.ExecuteTool):
                    assert not any(isinstance(o, fx.ExecuteTool) for o in self.outstanding), (
                        "tools must run serially"
                    )
                    self.executed.append(e.call.id)
                if isinstance(e, fx.RequestLlm):
                    self.attempts_seen.append(e.attempt)
                self.outstanding.append(e)
        return result


def llm_answer(data: st.DataObject, world: World, n: int) -> ev.LlmResponse:
    ncalls = data.draw(st.integers(0, 3), label="ncalls")
    calls = []
    for i in range(ncalls):
        name = data.draw(st.sampled_from(TOOLS), label="tool")
        args: dict[str, object] = {}
        if name == SPAWN_AGENTS_TOOL:
            args = {"tasks": data.draw(st.lists(st.sampled_from(["a", "b"]), max_size=3))}
        calls.append(ToolCall(id=f"call-{n}-{i}", name=name, args=args))
    msg = Message.assistant(
        data.draw(st.sampled_from(["", "ok", "thinking"])), tool_calls=tuple(calls)
    )
    return ev.LlmResponse(msg, Usage(total_tokens=10), "m")


def respond(data: st.DataObject, world: World, op: object, n: int) -> ev.Input:
    """The world's answer to one outstanding operation."""
    if isinstance(op, fx.MeasureContext):
        return ev.ContextMeasured(data.draw(st.integers(0, 1000)), 1000)
    if isinstance(op, fx.Compact):
        return ev.CompactionDone(100, 40, 3, fallback=data.draw(st.booleans()))
    if isinstance(op, fx.ScheduleRetry):
        return ev.RetryTimer(op.attempt)
    if isinstance(op, fx.RequestLlm):
        if data.draw(st.integers(0, 4)) == 0:
            kind = data.draw(st.sampled_from(list(ErrorKind)))
            return ev.LlmError(kind, "boom", data.draw(st.none() | st.floats(0, 5)))
        return llm_answer(data, world, n)
    if isinstance(op, fx.ExecuteTool):
        return ev.ToolComplete(
            ToolResult(
                tool_call_id=op.call.id,
                name=op.call.name,
                content="r",
                is_error=data.draw(st.booleans()),
            )
        )
    if isinstance(op, fx.RequestApproval):
        return ev.ApprovalDecision(
            op.request_id, data.draw(st.sampled_from(["yes", "no", "always", "timeout"]))
        )
    if isinstance(op, fx.SpawnSubAgents):
        child = data.draw(st.sampled_from([t.child_id for t in op.tasks]))
        return ev.SubAgentResult(child, "done", data.draw(st.booleans()))
    assert isinstance(op, fx.CancelOperation)
    return ev.OperationCancelled()


def run_turn(data: st.DataObject, world: World, turn_no: int) -> None:
    before = len(world.notices)
    world.outstanding.clear()
    world.apply(ev.UserMessage(f"t{turn_no}", Message.user("hi"), float(turn_no)))
    for step in range(60):
        if not is_busy(world.state):
            break
        disruption = data.draw(st.integers(0, 30), label="disrupt")
        if disruption == 0:
            world.apply(ev.Cancel())
            continue
        if disruption == 1:
            world.apply(ev.TurnDeadline(30))
            continue
        if disruption == 2:
            resume = data.draw(st.booleans(), label="resume")
            world.outstanding.clear()
            world.state = world.persisted  # the restarted loop reads what was committed
            world.apply(ev.Interrupted("loop restarted", resume))
            continue
        if not world.outstanding:
            pytest.fail(f"busy state {world.state} with nothing outstanding")
        op = world.outstanding.pop(0)
        if isinstance(op, fx.SpawnSubAgents):
            child_event = respond(data, world, op, step)
            assert isinstance(child_event, ev.SubAgentResult)
            remaining = tuple(t for t in op.tasks if t.child_id != child_event.child_id)
            if remaining:
                world.outstanding.insert(0, fx.SpawnSubAgents(op.parent_call_id, remaining))
            world.apply(child_event)
            continue
        world.apply(respond(data, world, op, turn_no * 100 + step))
    else:
        # A bounded turn must end; force it the way the executor would (deadline).
        world.apply(ev.TurnDeadline(1))
        if isinstance(world.state, Cancelling):
            world.apply(ev.OperationCancelled())
    assert not is_busy(world.state)
    terminal = [n for n in world.notices[before:] if n.terminal]
    assert len(terminal) == 1, terminal
    assert history_problems(world.history) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(list(Autonomy)), st.booleans())
def test_history_stays_valid_under_random_interleavings(
    data: st.DataObject, autonomy: Autonomy, sub: bool
) -> None:
    world = World(ctx_for(autonomy, sub=sub))
    for turn_no in range(data.draw(st.integers(1, 4), label="turns")):
        run_turn(data, world, turn_no)
    # Tools ran in the order the model asked for them.
    asked = [c.id for m in world.history for c in m.tool_calls]
    assert world.executed == [c for c in asked if c in world.executed]
    assert all(a <= world.ctx.limits.max_attempts for a in world.attempts_seen)


@given(st.integers(0, 6), st.integers(1, 5))
def test_cancel_answers_every_pending_tool(n_remaining: int, done_before: int) -> None:
    ctx = ctx_for(Autonomy.FULL)
    calls = [ToolCall(id=f"c{i}", name="read") for i in range(n_remaining + 1)]
    state = ToolExecuting(
        turn=Turn(turn_id="t", started_at=0), current=calls[0], remaining=tuple(calls[1:])
    )
    result = transition(state, ctx, ev.Cancel())
    persisted = [e for e in result.effects if isinstance(e, fx.PersistMessage)]
    assert len(persisted) == 1 + n_remaining
    assert [p.message.tool_call_id for p in persisted] == [c.id for c in calls]
    assert persisted[0].message.text == "Cancelled by user"
    assert all(p.message.text == "Skipped due to cancellation" for p in persisted[1:])
    assert isinstance(result.new_state, Idle)


@given(st.lists(st.sampled_from([k for k in ErrorKind if k.retryable]), min_size=1, max_size=8))
def test_retries_are_bounded(kinds: list[ErrorKind]) -> None:
    ctx = ctx_for(Autonomy.FULL)
    state: State = LlmRequesting(turn=Turn(turn_id="t", started_at=0))
    requests = 1
    for kind in kinds:
        if not isinstance(state, LlmRequesting):
            break
        result = transition(state, ctx, ev.LlmError(kind, "x"))
        state = result.new_state
        if isinstance(state, LlmRequesting):
            assert state.attempt <= ctx.limits.max_attempts
            state = transition(state, ctx, ev.RetryTimer(state.attempt)).new_state
            requests += 1
    assert requests <= ctx.limits.max_attempts
    if len(kinds) >= ctx.limits.max_attempts:
        assert isinstance(state, Error)


@pytest.mark.parametrize("kind", [ErrorKind.AUTH, ErrorKind.INVALID_REQUEST])
def test_auth_and_invalid_request_never_retry(kind: ErrorKind) -> None:
    state = LlmRequesting(turn=Turn(turn_id="t", started_at=0))
    result = transition(state, ctx_for(Autonomy.FULL), ev.LlmError(kind, "nope"))
    assert isinstance(result.new_state, Error)
    assert result.new_state.error_kind == kind.value


def test_retry_after_is_honoured() -> None:
    state = LlmRequesting(turn=Turn(turn_id="t", started_at=0))
    result = transition(
        state,
        ctx_for(Autonomy.FULL),
        ev.LlmError(ErrorKind.RATE_LIMIT, "slow down", retry_after=7.5),
    )
    assert fx.ScheduleRetry(7.5, 2) in result.effects
    assert result.new_state == LlmRequesting(turn=state.turn, attempt=2, waiting_retry=True)


def test_context_overflow_compacts_then_retries_once() -> None:
    ctx = ctx_for(Autonomy.FULL)
    state: State = LlmRequesting(turn=Turn(turn_id="t", started_at=0))
    state = transition(state, ctx, ev.LlmError(ErrorKind.CONTEXT_OVERFLOW, "too long")).new_state
    assert state.kind == "compacting"
    result = transition(state, ctx, ev.CompactionDone(10, 5, 2))
    assert fx.RequestLlm(1) in result.effects
    final = transition(result.new_state, ctx, ev.LlmError(ErrorKind.CONTEXT_OVERFLOW, "again"))
    assert isinstance(final.new_state, Error)


def test_user_message_while_busy_is_illegal() -> None:
    state = AwaitingLlm(turn=Turn(turn_id="t", started_at=0))
    with pytest.raises(IllegalTransition, match="busy"):
        transition(state, ctx_for(Autonomy.FULL), ev.UserMessage("t2", Message.user("x"), 1.0))


def test_error_recovers_on_next_message() -> None:
    result = transition(
        Error(error_kind="auth", message="bad key"),
        ctx_for(Autonomy.FULL),
        ev.UserMessage("t2", Message.user("x"), 1.0),
    )
    assert isinstance(result.new_state, AwaitingLlm)


TURNS = st.builds(
    Turn,
    turn_id=st.sampled_from(["t1", "t2"]),
    started_at=st.floats(0, 10),
    iterations=st.integers(0, 3),
    text=st.sampled_from(["", "so far"]),
    overflow_compacted=st.booleans(),
)
INFLIGHT = st.one_of(
    st.builds(AwaitingLlm, turn=TURNS),
    st.builds(
        Compacting,
        turn=TURNS,
        reason=st.sampled_from(["threshold", "overflow"]),
        attempt=st.integers(1, 3),
    ),
    st.builds(
        LlmRequesting,
        turn=TURNS,
        attempt=st.integers(1, 3),
        waiting_retry=st.booleans(),
        streamed=st.booleans(),
    ),
)


@given(INFLIGHT, st.booleans())
def test_recovery_from_the_recovery_form_is_recovery_from_the_state(
    state: State, resume: bool
) -> None:
    """Why the executor may skip commits that leave the recovery form unchanged."""
    ctx = ctx_for(Autonomy.FULL)
    event = ev.Interrupted("loop restarted", resume)
    assert transition(recovery_form(state), ctx, event) == transition(state, ctx, event)


@pytest.mark.parametrize("streamed", [False, True])
def test_retry_after_streamed_text_tells_clients_to_discard_it(streamed: bool) -> None:
    ctx = ctx_for(Autonomy.FULL)
    state: State = LlmRequesting(turn=Turn(turn_id="t", started_at=0))
    if streamed:
        state = transition(state, ctx, ev.LlmChunk("partial ")).new_state
    result = transition(state, ctx, ev.LlmError(ErrorKind.NETWORK, "502"))
    (retrying,) = [e.event for e in result.effects if isinstance(e, fx.NotifyClient)]
    assert isinstance(retrying, Retrying)
    assert retrying.discard_partial is streamed
    again = transition(result.new_state, ctx, ev.RetryTimer(2)).new_state
    assert isinstance(again, LlmRequesting) and not again.streamed
