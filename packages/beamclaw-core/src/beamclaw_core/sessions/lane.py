"""The session lane (seed 000 ADR-003 ``bc_session``; seed 004 queue decisions).

One lane per conversation in use: a small runner that applies the decisions of
:mod:`~beamclaw_core.sessions.queue_policy` and runs one turn at a time. It owns the
queue of pending runs (persisted, so they survive a restart), its person's standing
``/always`` grants for its agent (:class:`~beamclaw_core.approvals.PersonAllowlist`), the
event bus and the in-memory view; when it has been :meth:`SessionLane.idle` for a while,
:class:`~beamclaw_core.api.Core` drops it and rebuilds it from the store on the next use.
Its :meth:`SessionLane.loop` is the transient worker: the supervisor restarts it after a
crash and it resumes the interrupted turn from the persisted state (pending tools get
synthetic "interrupted" results).

In-chat commands and compaction act on it only through
:class:`~beamclaw_core.sessions.control.LaneControl`, which it implements.

Invariants: at most one turn runs at a time (one worker, one turn lock); a run is in the
in-memory queue, in a running turn, or answered on its handle (``Dropped``, a terminal
turn event), never lost; ``submit`` returns once its run is durable (see
:mod:`~beamclaw_core.sessions.receipts` for a run handed to an idle worker).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Generator, Iterable, Mapping
from contextlib import contextmanager
from typing import Literal

from loguru import logger

from beamclaw_core.loop.context import ApprovalRule, LoopContext, LoopLimits
from beamclaw_core.loop.executor import TurnExecutor, ViewCache
from beamclaw_core.loop.inputs import (
    ApprovalDecision,
    Cancel,
    CompactionDone,
    Decision,
    Interrupted,
    UserMessage,
)
from beamclaw_core.loop.ports import LoopDeps
from beamclaw_core.loop.states import AwaitingApproval, Error, Idle, State, is_busy, turn_model
from beamclaw_core.loop.turn_events import Dropped, Notice, TurnError, TurnEvent
from beamclaw_core.sessions.admission import StartSlot
from beamclaw_core.sessions.bus import Subscription, TurnHandle
from beamclaw_core.sessions.commands import parse_command, run_command
from beamclaw_core.sessions.compacting import compact_lane
from beamclaw_core.sessions.composition import lane_ports
from beamclaw_core.sessions.control import SessionInfo as SessionInfo  # re-exported: its old home
from beamclaw_core.sessions.crash import CRASH_REASON, crash_report
from beamclaw_core.sessions.ends import SessionEnd
from beamclaw_core.sessions.errors import TurnNotStartedError
from beamclaw_core.sessions.lane_queue import LaneQueue
from beamclaw_core.sessions.publisher import LanePublisher
from beamclaw_core.sessions.queue_policy import ActNow, Arrival, Enqueue, HandOver
from beamclaw_core.sessions.runs import PendingRun, turn_message
from beamclaw_core.sessions.runtime import Runtime
from beamclaw_core.store import RESET, ConversationRecord
from beamclaw_obs import EventType, emit
from beamclaw_tools import ContentPart, SessionRef

RESTART_REASON = "interrupted by restart"
STOPPED_TEXT = "The session was stopped before this turn ended."


class SessionLane:
    """Serialises the runs of one conversation."""

    def __init__(self, runtime: Runtime, record: ConversationRecord) -> None:
        self.rt = runtime
        self.id = record.id
        self.agent_id = record.agent_id
        self.user_id = record.user_id
        self.channel = record.channel
        self.parent_id = record.parent_id
        self.state: State = record.state
        self.last_activity_at = record.last_activity_at
        self.publisher = LanePublisher(
            record.id,
            runtime.subscriber_buffer,
            runtime.clock,
            runtime.event_replay,
            relay=runtime.relay,
        )
        self.bus = self.publisher.bus
        self.allowlist = runtime.always.person(record.agent_id, record.user_id, record.id)
        self.view = ViewCache(runtime.store, record.id, new=record.new)
        self.executor: TurnExecutor | None = None
        self.recover_as_restart = False
        self.submitted: tuple[str, bool] | None = None
        """A sub-agent's ``submit_result`` (its parent reads it when the turn ends)."""
        self._record_fresh = True
        """The state came with ``record`` just now: the worker's first start need not read
        it again (a restart after a crash does)."""
        self._queue = LaneQueue(runtime, self.id, self.publish)
        self._turn_lock = asyncio.Lock()
        self._in_turn = False
        """The worker took runs off the queue and has not finished their turn."""
        self._acting = 0
        """Commands (``/new``, a REST reset …) working on the lane outside any turn."""
        self._answered: str | None = None
        """The approval request answered last: answered once, never twice."""

    @property
    def is_sub_agent(self) -> bool:
        return self.parent_id is not None

    def publish(self, event: TurnEvent) -> None:
        self.publisher.publish(event)

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        return self.publisher.subscribe(after_seq)

    # ------------------------------------------------------------ arrivals

    async def submit(
        self,
        content: str | tuple[ContentPart, ...],
        *,
        source_message_id: str | None = None,
        channel: str | None = None,
        drafts: bool = True,
        scheduled: bool = False,
        model: str | None = None,
        run_id: str | None = None,
    ) -> TurnHandle:
        """Queue a message (a command acts at once); returns its handle, subscribed before
        anything can happen, once the message is durable: stored in the queue behind a
        turn, or — handed to an idle worker — stored by its turn's first commit
        (:mod:`~beamclaw_core.sessions.receipts`).

        ``drafts``: the sender wants the answer as it streams; see :meth:`Core.send`.
        ``scheduled``: the scheduler sent it (``collect`` never merges it with another).
        ``model``: the turn's model override (None: the agent's model).
        ``run_id``: the run's id (cluster mode: another node's handle waits under it)."""
        now = self.rt.clock()
        run_id = run_id or uuid.uuid4().hex
        handle = self.publisher.open(run_id, drafts)
        command = parse_command(content) if isinstance(content, str) else None
        decision = self._queue.decide(
            Arrival(run_id, command), turn_running=self.executor is not None
        )
        if isinstance(decision, ActNow):
            with self.acting():
                self.publisher.reply(run_id, await run_command(self, decision.command))
            return handle
        behind = isinstance(decision, Enqueue)
        run = PendingRun(
            run_id,
            content,
            now,
            source_message_id,
            channel or self.channel,
            queued_behind=behind,
            scheduled=scheduled,
            model=model,
            persisted=behind,
        )
        if isinstance(decision, HandOver):
            await self._queue.hand_over(run, now)
            return handle
        if decision.interrupt and self.executor is not None:
            self.executor.post(Cancel("Interrupted by a newer message"))
        await self._queue.enqueue(run, decision, now)
        return handle

    async def restore_queue(self) -> None:
        """Reload runs persisted before a restart (they resume in order)."""
        await self._queue.restore()

    # ------------------------------------------------------------ control (LaneControl)

    async def cancel(self, reason: str = "Cancelled by user") -> int:
        """``/stop``: clear the queue and cancel the running turn. Returns cleared count."""
        cleared = await self._queue.clear("Stopped before it ran (/stop).")
        if self.executor is not None:
            self.executor.post(Cancel(reason))
        return cleared

    def turn_running(self) -> bool:
        return self.executor is not None and is_busy(self.executor.state)

    def pending_approval(self) -> AwaitingApproval | None:
        """The approval the turn waits for and nobody has answered yet."""
        state = self.executor.state if self.executor is not None else None
        if not isinstance(state, AwaitingApproval) or state.request_id == self._answered:
            return None
        return state

    def answered(self, request_id: str) -> bool:
        """``request_id`` is the approval this lane was answered last."""
        return self._answered == request_id

    def answer(self, request_id: str, decision: Decision) -> bool:
        """Answer the pending approval ``request_id``: True once, False for any other id
        and for a second answer (the first one is on its way to the loop)."""
        pending = self.pending_approval()
        if pending is None or pending.request_id != request_id or self.executor is None:
            return False
        self._answered = request_id
        emit(
            EventType.APPROVAL_RESOLVED,
            session_id=self.id,
            tool_name=pending.pending.name,
            decision=decision,
        )
        self.executor.post(ApprovalDecision(request_id, decision))
        return True

    async def reset_view(self, reason: str) -> None:
        """Start the LLM view afresh (``/reset``, ``/new``, daily/idle reset); history and
        the person's standing ``/always`` grants stay."""
        await self.rt.store.append_marker(self.id, RESET, {"reason": reason}, now=self.rt.clock())
        self.view.invalidate()
        emit(EventType.SESSION_RESET, session_id=self.id, reason=reason)
        self.rt.ends.fire(SessionEnd(self.id, self.agent_id, self.user_id, reason, closed=False))

    def info(self) -> SessionInfo:
        state = self.executor.state if self.executor is not None else self.state
        error = state.message if isinstance(state, Error) else None
        return SessionInfo(
            self.id,
            self.agent_id,
            self.user_id,
            self.channel,
            state.kind,
            len(self._queue),
            self.last_activity_at,
            error,
            self.parent_id,
            self.bus.open_subscriptions(),
        )

    async def settle(self) -> None:
        """Wait until no turn is running and nothing is queued (tests, shutdown)."""
        while self.executor is not None or len(self._queue):  # noqa: ASYNC110 - two conditions
            await asyncio.sleep(0.01)

    def stale(self) -> None:
        """Cluster hook: another node wrote this session since the lane read it. Its view
        and state are read again when its (stopped) worker starts next, and a turn the
        other node left mid-way is recovered then."""
        self._record_fresh = False
        self.view.invalidate()

    def idle(self) -> bool:
        """No turn running or about to run, no command at work, nothing queued, and a
        quiet state."""
        return (
            self.executor is None
            and not self._in_turn
            and not self._acting
            and not len(self._queue)
            and isinstance(self.state, Idle | Error)
        )

    @contextmanager
    def acting(self) -> Generator[None]:
        """A command works on the lane (``/new``'s memory flush, then its reset marker):
        the lane is not idle meanwhile, so a cluster node keeps the session's lease until
        the command's writes are done (it gave the lease up as soon as a ``/reset``
        cancelled the turn, and the marker was refused as a stale owner's)."""
        self._acting += 1
        try:
            yield
        finally:
            self._acting -= 1

    # ------------------------------------------------------------ the worker

    async def loop(self) -> None:
        """The supervised worker: recover, then run queued messages forever."""
        try:
            await self._work()
        except asyncio.CancelledError as stopped:
            self._queue.abandon_unstored(stopped)
            raise

    async def _work(self) -> None:
        if not self._record_fresh:
            record = await self.rt.store.get(self.id)
            if record is not None:
                self.state = record.state
        self._record_fresh = False
        if is_busy(self.state):
            restart = self.recover_as_restart
            self.recover_as_restart = False
            emit(EventType.SESSION_RECOVERED, session_id=self.id, state=self.state.kind)
            await self._run(
                Interrupted(RESTART_REASON if restart else CRASH_REASON, resume=not restart)
            )
        while True:
            await self._take_turn(await self._queue.next_turn())

    async def _take_turn(self, runs: list[PendingRun]) -> None:
        self._in_turn = True
        receipts = self._queue.receipts
        try:
            before = self.state
            try:
                await self._turn(runs)
            except BaseException as exc:
                receipts.fail(runs, exc)  # not committed: their senders get the failure
                if self.state is before:  # no transition committed: still queued in the store
                    self._queue.put_back([r for r in runs if r.persisted])
                raise
        finally:
            self._in_turn = False
        if receipts.outstanding(runs):  # the machine refused the message
            receipts.fail(runs, TurnNotStartedError(self.id))

    async def _turn(self, runs: list[PendingRun]) -> None:
        primary = runs[0]
        self.publisher.merge(primary.id, [r.id for r in runs[1:]])
        now = self.rt.clock()
        why = self.rt.reset_reason(self.last_activity_at, now)
        if why is not None and (await self.view.get()).messages:
            await self.reset_view(f"automatic reset ({why})")
            self.publish(Notice(self.id, primary.id, f"Started a fresh session: {why}."))
        remaining = await self.rt.budget_left(self.agent_id, now)
        self.last_activity_at = now
        await self._run(
            UserMessage(primary.id, turn_message(runs), now, remaining, primary.model),
            consumed=tuple(r.id for r in runs if r.persisted),
            accepted=lambda: self._queue.receipts.accept(runs),
        )

    async def _run(
        self,
        first: UserMessage | Interrupted,
        consumed: tuple[str, ...] = (),
        accepted: Callable[[], None] | None = None,
    ) -> None:
        async with self._turn_lock:
            model = first.model if isinstance(first, UserMessage) else turn_model(self.state)
            slot = await self.rt.turn_starts.slot()  # given back at the first model call
            try:
                executor = TurnExecutor(self.context(), self.state, self.deps(model, slot))
                self.executor = executor
                try:
                    self.state = await executor.run(
                        first, consumed_runs=consumed, on_commit=accepted
                    )
                finally:
                    self.executor = None
                    self.state = executor.state
            finally:
                slot.release()

    def context(self) -> LoopContext:
        s = self.rt.settings
        loop = s.agentic_loop
        rules: Mapping[str, ApprovalRule] = {}
        tools = self.rt.tools
        if tools is not None:
            rules = self.rt.approval_rules.of(tools.listed(self.rt.tool_policy_for(self.agent_id)))
        return LoopContext(
            conversation_id=self.id,
            agent_id=self.agent_id,
            autonomy=self.rt.autonomy_for(self.agent_id),
            is_sub_agent=self.is_sub_agent,
            tool_policies=rules,
            allowlist=frozenset(self.allowlist),
            limits=LoopLimits(
                max_tool_iterations=loop.max_tool_iterations,
                max_attempts=loop.max_attempts,
                retry_base_delay=loop.retry_base_delay_seconds,
                retry_max_delay=loop.retry_max_delay_seconds,
                retry_after_cap=loop.retry_after_cap_seconds,
                max_tokens_per_turn=loop.max_tokens_per_turn,
                approval_timeout=loop.approval_timeout_seconds,
                compaction_threshold_pct=loop.compaction_threshold_pct,
                max_subagents=loop.max_subagents,
                turn_timeout_seconds=loop.turn_timeout_seconds,
                images=s.attachments.limits(),
            ),
        )

    def session_ref(self) -> SessionRef:
        return SessionRef(
            session_id=self.id,
            agent_id=self.agent_id,
            user_id=self.user_id,
            channel=self.channel,
            autonomy=self.rt.autonomy_for(self.agent_id),
        )

    def deps(self, model: str | None = None, slot: StartSlot | None = None) -> LoopDeps:
        """The ports of a turn; ``model``: the turn's model override (None: the agent's);
        ``slot``: its start slot (:mod:`.admission`), given back at its first model call."""

        async def compact(reason: Literal["threshold", "overflow"], window: int) -> CompactionDone:
            if slot is not None:  # a summary (and its memory flush) calls the model
                slot.release()
            return await compact_lane(self, window, reason=reason)

        def submit(result: str, success: bool) -> None:
            self.submitted = (result, success)

        return lane_ports(
            self.rt,
            session=self.session_ref(),
            view=self.view,
            last_activity_at=self.last_activity_at,
            is_sub_agent=self.is_sub_agent,
            publish=self.publish,
            wants_drafts=self.bus.wants_drafts,
            allow_tool=self.allowlist.add,
            compact=compact,
            submit=submit,
            model=model,
            slot=slot,
        )

    async def give_up(self, error: BaseException | None) -> None:
        """The loop crashed more often than the restart budget allows: ``Error``, user told.

        Whatever fails here (a store outage is a common reason the loop crashed), every
        run still waiting ends with exactly one terminal event: the interrupted turn with
        ``TurnError``, queued runs with ``Dropped`` (the worker is gone: their senders must
        not wait for someone else's message to restart it), runs taken from the queue but
        never committed with ``TurnError``. A write that fails is logged; the lane then
        keeps its ``Error`` state in memory over the stale stored one.
        """
        self._queue.abandon_unstored(
            error if isinstance(error, Exception) else TurnNotStartedError(self.id)
        )
        report = crash_report(self.state, self.context(), error)
        self.state = report.state
        queued = self._queue.drain()
        stored = False
        try:
            await self.rt.store.commit(
                self.id,
                self.state,
                report.messages,
                now=self.rt.clock(),
                consumed_runs=[r.id for r in queued if r.persisted],
            )
            stored = True
        except Exception as e:  # told below all the same; nothing else can store it
            self._record_fresh = True  # the next worker start keeps Error, not the stored state
            logger.opt(exception=e).error("{}: could not store the loop's crash: {}", self.id, e)
        finally:
            self.view.invalidate()
            kind = report.state.error_kind
            emit(EventType.TURN_ERROR, session_id=self.id, kind=kind, stored=stored)
            self.publish(TurnError(self.id, report.turn_id, kind, report.text))
            for run in queued:
                self.publish(Dropped(self.id, run.id, reason=report.text))
            self.publisher.end_unfinished(lambda r: TurnError(self.id, r, kind, report.text))

    def close(self) -> None:
        """The lane is done (stop, delete): every handle still waiting gets ``TurnError``
        (kind ``stopped``: its turn cannot end in this process), its bus closes, and
        senders of messages handed to its worker but never committed get
        :class:`TurnNotStartedError`."""
        self.publisher.end_unfinished(lambda r: TurnError(self.id, r, "stopped", STOPPED_TEXT))
        self.bus.close()
        self._queue.abandon_unstored(TurnNotStartedError(self.id))


def any_turn_running(lanes: Iterable[SessionLane]) -> bool:
    """Whether any of ``lanes`` is not idle (a turn running, queued or waiting): a full
    collection now would stall its stream (the lane sweep's and the heap trim's wait)."""
    return not all(lane.idle() for lane in lanes)
