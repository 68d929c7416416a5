"""The effect executor: drives :func:`transition` for one conversation turn.

Invariants:

* The new state and the messages of a transition are committed in one transaction
  *before* any other effect of that transition runs. A transition that appends nothing
  and leaves the state's :func:`~beamclaw_core.loop.states.recovery_form` unchanged
  (the first streamed chunk, the LLM request after measuring the context, a retry
  timer) is not committed: a restart would recover it identically from what is stored.
  A tool step therefore costs two commits: the assistant message with ``ToolExecuting``,
  then the tool result with ``AwaitingLlm``.
* In particular the turn's first transition (the user message, ``Accepted``,
  ``MeasureContext``) is committed before its request is built, so the model never sees
  a question that is not stored: a ``kill -9`` at any point after the request left finds
  the question in the store, and the restarted loop resumes the turn. When that commit
  fails nothing of the turn is stored or sent, and whoever sent the message is told
  (a queued run stays queued).
* At most one operation (LLM call, tool, compaction, retry or approval timer) is in
  flight; its outcome — result, exception or timeout — always comes back as an event.
* Cancelling an operation bumps a generation counter: an event of the old operation that
  was already queued is dropped, never applied to the new state.
* Whatever happens, the turn ends in ``Idle`` or ``Error``; an exception escaping
  :meth:`TurnExecutor.run` is a loop crash for the session supervisor to handle.
* Exactly one terminal event per turn: the transition that ends a turn is committed
  before its effects run, and if they fail part-way its terminal event is still
  published on the way down (a restart finds the turn ended and tells nothing).
* The executor reaches the world only through the ports of its
  :class:`~beamclaw_core.loop.ports.LoopDeps` (model, tools, conversation log, clock,
  events, sub-agents).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, assert_never

from loguru import logger

from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.context import LoopContext
from beamclaw_core.loop.errors import IllegalTransition
from beamclaw_core.loop.history import HistoryRepair
from beamclaw_core.loop.inputs import (
    ApprovalDecision,
    ContextMeasured,
    Input,
    OperationCancelled,
    RetryTimer,
    ToolComplete,
    TurnDeadline,
    UserMessage,
)
from beamclaw_core.loop.llm_call import complete_llm, provider_failure, stream_llm
from beamclaw_core.loop.machine import transition
from beamclaw_core.loop.observe import observe_turn_event
from beamclaw_core.loop.ports import LoopDeps
from beamclaw_core.loop.request import LlmRequest, next_turn
from beamclaw_core.loop.states import State, is_busy, recovery_form
from beamclaw_core.messages import Message
from beamclaw_core.providers import estimate_prompt_tokens
from beamclaw_core.store import ConversationStore, View
from beamclaw_obs import EventType, emit, forget_cancellation, scrub
from beamclaw_tools import ToolCall, ToolResult


class ViewCache:
    """The conversation's LLM view, kept in memory and extended on every commit.

    ``new``: the conversation was just created, so its view is known to be empty.
    The view's repaired history is kept with it and repaired only for the messages
    appended since the last request; both are dropped together by :meth:`invalidate`
    (compaction), so what they derive never outlives the messages it came from.
    """

    def __init__(
        self, store: ConversationStore, conversation_id: str, *, new: bool = False
    ) -> None:
        self._store = store
        self._id = conversation_id
        self._view: View | None = View(None, [], 1) if new else None
        self._repair = HistoryRepair()

    async def get(self) -> View:
        if self._view is None:
            self._view = await self._store.view(self._id)
            self._repair = HistoryRepair()
        return self._view

    async def history(self) -> list[Message]:
        """``repair_history`` of the view's messages, fed only what is new to it."""
        view = await self.get()
        if self._repair.fed > len(view.messages):  # shrunk behind our back: start over
            self._repair = HistoryRepair()
        return self._repair.feed(view.messages[self._repair.fed :]).result()

    def extend(self, messages: Sequence[Message]) -> None:
        if self._view is not None:
            self._view.messages.extend(messages)

    def invalidate(self) -> None:
        self._view = None


class TurnExecutor:
    """Runs one turn (or the remainder of an interrupted one) to ``Idle``/``Error``."""

    def __init__(self, ctx: LoopContext, state: State, deps: LoopDeps) -> None:
        self.ctx = ctx
        self.state = state
        self.deps = deps
        self._inbox: asyncio.Queue[tuple[int | None, Input]] = asyncio.Queue()
        self._generation = 0
        self._op: asyncio.Task[None] | None = None
        self._deadline: asyncio.Task[None] | None = None
        self._measured: LlmRequest | None = None
        """The request ``MeasureContext`` built, reused by the ``RequestLlm`` that follows
        it; dropped by anything that changes the view (a commit, a compaction)."""
        self._started_at: float | None = None
        """When the running turn began (for its obs events' duration)."""

    # ------------------------------------------------------------ public

    def post(self, event: Input) -> None:
        """Deliver an external event (cancel, approval decision, sub-agent result)."""
        self._inbox.put_nowait((None, event))

    async def run(
        self,
        first: Input,
        *,
        consumed_runs: tuple[str, ...] = (),
        on_commit: Callable[[], None] | None = None,
    ) -> State:
        """Run ``first`` and what follows until the turn ends; returns the final state.

        ``consumed_runs``: persisted queued runs that ``first`` (a ``UserMessage``) turns
        into history; they leave the queue in its transaction. ``on_commit`` is called
        once that transaction has committed, before any effect runs: from then on the
        message is durable even if it was never queued.
        """
        try:
            await self._feed(
                first,
                consumed_runs=consumed_runs,
                starts_turn=isinstance(first, UserMessage),
                on_commit=on_commit,
            )
            timeout = self.ctx.limits.turn_timeout_seconds
            if timeout is not None and is_busy(self.state):
                self._deadline = asyncio.create_task(self._after(timeout, TurnDeadline(timeout)))
            while is_busy(self.state):
                generation, event = await self._inbox.get()
                if generation is not None and generation != self._generation:
                    continue
                await self._feed(event, offered=generation is None)
            return self.state
        finally:
            await self._stop_op()
            if self._deadline is not None:
                # only sleeps, then posts to an inbox nobody reads any more: cancelled,
                # not awaited, so the turn's end costs no loop turn (its sender may be
                # sending the next message as soon as it has the answer)
                self._deadline.cancel()
                # and it lets go of the cancellation it keeps, whose traceback holds this
                # executor: else every turn waited for the garbage collector
                self._deadline.add_done_callback(forget_cancellation)

    # ------------------------------------------------------------ transitions

    async def _feed(
        self,
        event: Input,
        *,
        consumed_runs: tuple[str, ...] = (),
        starts_turn: bool = False,
        on_commit: Callable[[], None] | None = None,
        offered: bool = False,
    ) -> None:
        """Apply one event. An :class:`IllegalTransition` is a loop crash (the supervisor's
        recovery resumes the turn from what is stored), except for an ``offered`` event:
        one posted from outside the turn (a cancel, an approval answer, a sub-agent result)
        may race the state it was meant for and is dropped when the state no longer takes it.
        """
        try:
            result = transition(self.state, self.ctx, event)
        except IllegalTransition as e:
            if not offered:
                raise
            logger.debug("{}: stale {} dropped: {}", self.ctx.conversation_id, e, event)
            return
        new_messages = [e.message for e in result.effects if isinstance(e, fx.PersistMessage)]
        must_commit = bool(
            new_messages
            or consumed_runs
            or starts_turn
            or recovery_form(result.new_state) != recovery_form(self.state)
        )
        if must_commit:
            await self.deps.log.commit(
                result.new_state,
                new_messages,
                now=self.deps.clock.now(),
                consumed_runs=consumed_runs,
                activity=starts_turn,
            )
            if new_messages:
                self._measured = None
        if (turn := getattr(self.state, "turn", None)) is not None:
            self._started_at = turn.started_at
        self.state = result.new_state
        if on_commit is not None:
            on_commit()
        effects = result.effects
        for i, effect in enumerate(effects):
            started = False
            try:
                self.deps.events.before_effect(effect)
                started = True
                await self._run_effect(effect)
            except BaseException:
                self._tell_ending(effects[i + 1 if started else i :])
                raise

    def _tell_ending(self, unrun: tuple[fx.Effect, ...]) -> None:
        """The effects of a transition failed part-way (a crash, a cancellation): publish
        its terminal event if it has one not yet published. The end of the turn is
        committed already, so a restarted loop finds nothing to resume and would never
        tell it. (A transition without one left the turn busy: the restarted loop resumes
        the turn, which ends there.)"""
        for effect in unrun:
            if isinstance(effect, fx.NotifyClient) and effect.event.terminal:
                self.deps.events.publish(effect.event)

    async def _run_effect(self, effect: fx.Effect) -> None:
        """Dispatch one effect; exhaustive over :data:`~beamclaw_core.loop.effects.Effect`."""
        d = self.deps
        match effect:
            case fx.PersistMessage():
                pass  # committed with its transition, before any effect runs
            case fx.NotifyClient(event=event):
                d.events.publish(event)
                observe_turn_event(event, self._started_at, d.clock.now())
            case fx.MeasureContext():
                self._measured = request = await self._request()
                tokens = estimate_prompt_tokens(request.messages, request.tools)
                self._post_op(ContextMeasured(tokens, d.model.context_window))
            case fx.Compact(reason=reason):
                d.log.invalidate()
                self._measured = None
                self._start(self._compact(reason))
            case fx.RequestLlm(attempt=attempt):
                emit(
                    EventType.LLM_REQUEST,
                    session_id=self.ctx.conversation_id,
                    model=d.model.model or d.model.provider.model,
                    attempt=attempt,
                )
                self._start(self._llm())
            case fx.ScheduleRetry(attempt=attempt, delay=delay):
                emit(
                    EventType.LLM_RETRY,
                    session_id=self.ctx.conversation_id,
                    attempt=attempt,
                    delay_s=delay,
                )
                self._start(self._after(delay, RetryTimer(attempt), op=True))
            case fx.ExecuteTool(call=call):
                self._start(self._tool(call))
            case fx.RequestApproval(request_id=request_id, call=call, timeout=timeout):
                emit(
                    EventType.APPROVAL_REQUESTED,
                    session_id=self.ctx.conversation_id,
                    tool_name=call.name,
                    request_id=request_id,
                )
                self._start(self._after(timeout, ApprovalDecision(request_id, "timeout"), op=True))
            case fx.AllowTool(tool=tool):
                await d.tools.allow(tool)
            case fx.SpawnSubAgents():
                await d.subagents.spawn(effect)
            case fx.CancelSubAgents(child_ids=child_ids):
                await d.subagents.cancel(child_ids)
            case fx.SubmitResult(result=result, success=success):
                d.subagents.submit(result, success)
            case fx.CancelOperation(ack=ack):
                await self._stop_op()
                if ack:
                    self._post_op(OperationCancelled())
            case _:
                assert_never(effect)

    # ------------------------------------------------------------ operations

    def _start(self, coro: Awaitable[None]) -> None:
        async def run() -> None:
            await coro

        self._op = asyncio.create_task(run())

    async def _stop_op(self) -> None:
        self._generation += 1
        op, self._op = self._op, None
        if op is not None:
            await _reap(op)

    def _post_op(self, event: Input) -> None:
        self._inbox.put_nowait((self._generation, event))

    async def _after(self, delay: float, event: Input, *, op: bool = False) -> None:
        generation = self._generation
        await self.deps.clock.sleep(delay)
        self._inbox.put_nowait((generation if op else None, event))

    async def _request(self) -> LlmRequest:
        builder, view = await next_turn(self.deps)
        return builder.request(view, history=await self.deps.log.history())

    async def _llm(self) -> None:
        generation = self._generation
        m = self.deps.model
        measured, self._measured = self._measured, None
        request = measured if measured is not None else await self._request()

        def post(event: Input) -> None:
            self._inbox.put_nowait((generation, event))

        try:
            if m.wants_stream():
                event = await stream_llm(
                    m.provider, request, coalesce_seconds=m.coalesce_seconds, post=post
                )
            else:
                event = await complete_llm(m.provider, request)
        except Exception as e:  # a provider bug must become an event, not a crash
            event = provider_failure(e)
        post(event)

    async def _tool(self, call: ToolCall) -> None:
        generation = self._generation
        try:
            result = await self.deps.tools.execute(call)
        except Exception as e:  # the registry never raises; a bug still must not hang
            result = ToolResult(
                tool_call_id=call.id,
                name=call.name,
                is_error=True,
                content=f"tool {call.name} failed: {type(e).__name__}: {e}",
            )
        result = result.model_copy(update={"content": scrub(result.content)})
        self._inbox.put_nowait((generation, ToolComplete(result)))

    async def _compact(self, reason: Literal["threshold", "overflow"]) -> None:
        generation = self._generation
        done = await self.deps.log.compact(reason, self.deps.model.context_window)
        self.deps.log.invalidate()
        self._inbox.put_nowait((generation, done))


async def _reap(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` and wait for it to end.

    ``asyncio.wait`` (not ``await task`` under ``suppress(CancelledError)``) so that a
    cancellation of the *caller* arriving meanwhile is never swallowed.
    """
    if not task.done():
        task.cancel()
        await asyncio.wait([task])
