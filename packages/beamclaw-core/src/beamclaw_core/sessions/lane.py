"""The session lane (seed 000 ADR-003 ``bc_session``; seed 004 queue decisions).

One lane per conversation in use. It owns the queue of pending runs (persisted, so they
survive a restart), its person's standing ``/always`` grants for its agent
(:class:`~beamclaw_core.approvals.PersonAllowlist`), the event bus and the in-memory view;
when it has been :meth:`SessionLane.idle` for a while, :class:`~beamclaw_core.api.Core`
drops it and rebuilds it from the store on the next use. Its :meth:`SessionLane.loop` is
the transient worker: the supervisor restarts it after a crash and it resumes the
interrupted turn from the persisted state (pending tools get synthetic "interrupted"
results).

Queue modes: ``followup`` runs queued messages one turn each (FIFO); ``collect`` merges
everything queued into one turn after a debounce; ``interrupt`` cancels the running turn.
Beyond ``cap`` queued messages the oldest is dropped and its sender told.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from loguru import logger

from beamclaw_core.loop import effects as fx
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
from beamclaw_core.loop.machine import transition
from beamclaw_core.loop.ports import LoopDeps
from beamclaw_core.loop.states import AwaitingApproval, Error, Idle, State, is_busy
from beamclaw_core.loop.turn_events import (
    Dropped,
    Notice,
    Queued,
    TurnDone,
    TurnError,
    TurnEvent,
)
from beamclaw_core.messages import Message
from beamclaw_core.sessions.bus import SessionBus, Subscription, TurnHandle
from beamclaw_core.sessions.commands import parse_command, run_command
from beamclaw_core.sessions.compacting import compact_lane
from beamclaw_core.sessions.composition import lane_ports
from beamclaw_core.sessions.errors import TurnNotStartedError
from beamclaw_core.sessions.runs import PendingRun, merge_runs
from beamclaw_core.sessions.runtime import Runtime, reset_due
from beamclaw_core.store import RESET, ConversationRecord
from beamclaw_obs import EventType, emit
from beamclaw_tools import ContentPart, SessionRef

RESTART_REASON = "interrupted by restart"
CRASH_REASON = "the loop crashed and was restarted"
STOPPED_TEXT = "The session was stopped before this turn ended."


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session as :meth:`Core.status` and :meth:`Core.list_sessions` describe it."""

    session_id: str
    agent_id: str
    user_id: str
    channel: str | None
    state: str
    queued: int
    last_activity_at: float
    error: str | None = None
    parent_id: str | None = None
    subscribers: int = 0
    """Open subscriptions to the session's events (streams and unfinished turn handles)."""


def _resolve(waiting: asyncio.Future[None]) -> None:
    if not waiting.done():  # its sender may have been cancelled meanwhile
        waiting.set_result(None)


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
        self.bus = SessionBus(runtime.subscriber_buffer)
        self.queue: deque[PendingRun] = deque()
        self.allowlist = runtime.always.person(record.agent_id, record.user_id, record.id)
        self.view = ViewCache(runtime.store, record.id, new=record.new)
        self._record_fresh = True
        """The state came with ``record`` just now: the worker's first start need not read
        it again (a restart after a crash does)."""
        self.executor: TurnExecutor | None = None
        self.recover_as_restart = False
        self.submitted: tuple[str, bool] | None = None
        self.on_submit: list[asyncio.Future[tuple[str, bool]]] = []
        self._handles: dict[str, TurnHandle] = {}
        self._aliases: dict[str, str] = {}
        self._wake = asyncio.Event()
        self._enqueued = asyncio.Event()
        self._positions: dict[str, int] = {}
        self._turn_lock = asyncio.Lock()
        self._last_enqueue = 0.0
        self._in_turn = False
        """The worker took runs off the queue and has not finished their turn."""
        self._accepting: dict[str, asyncio.Future[None]] = {}
        """Senders of runs handed to the idle worker without being queued, waiting for
        the turn's first commit (see :meth:`submit`)."""

    @property
    def is_sub_agent(self) -> bool:
        return self.parent_id is not None

    # ------------------------------------------------------------ events

    def publish(self, event: TurnEvent) -> None:
        self.bus.publish(event)
        if event.terminal and event.turn_id is not None:
            for run_id in [
                event.turn_id,
                *[a for a, t in self._aliases.items() if t == event.turn_id],
            ]:
                handle = self._handles.pop(run_id, None)
                if handle is not None:
                    handle._finish(event)  # pyright: ignore[reportPrivateUsage]
                self._aliases.pop(run_id, None)

    def subscribe(self) -> Subscription:
        return self.bus.subscribe()

    def _handle(self, run_id: str, drafts: bool = True) -> TurnHandle:
        def mine(event: TurnEvent) -> bool:
            return event.turn_id == run_id or (
                event.turn_id is not None and self._aliases.get(run_id) == event.turn_id
            )

        handle = TurnHandle(
            self.id, run_id, self.bus.subscribe(mine, until_terminal=True, drafts=drafts)
        )
        self._handles[run_id] = handle
        return handle

    def reply(self, run_id: str, text: str) -> None:
        """Answer a run without a turn (commands): a notice, then ``TurnDone``."""
        self.publish(Notice(self.id, run_id, text))
        self.publish(TurnDone(self.id, run_id, text=text))

    # ------------------------------------------------------------ queue

    async def submit(
        self,
        content: str | tuple[ContentPart, ...],
        *,
        source_message_id: str | None = None,
        channel: str | None = None,
        drafts: bool = True,
    ) -> TurnHandle:
        """Queue a message; returns its handle (subscribed before anything can happen)
        once the message is durable.

        A message for a busy lane is stored in the queue first. One for an idle lane is
        handed straight to the worker, and this returns when the turn's first commit (the
        message itself, with the new state) is done: one transaction instead of two, and
        the same promise, since a crash before that commit fails this call. The sender
        is answered on the event loop's next round, after what the worker started
        meanwhile: the turn's LLM request is out before the sender's own work resumes.

        ``drafts``: the sender wants the answer as it streams; see :meth:`Core.send`."""
        now = self.rt.clock()
        busy = self.executor is not None or bool(self.queue)
        run = PendingRun(
            uuid.uuid4().hex,
            content,
            now,
            source_message_id,
            channel or self.channel,
            queued_behind=busy,
            persisted=busy,
        )
        handle = self._handle(run.id, drafts)
        command = parse_command(run.text) if isinstance(content, str) else None
        if command is not None:
            self.reply(run.id, await run_command(self, command))
            return handle
        queue_cfg = self.rt.settings.queue
        if busy and queue_cfg.mode == "interrupt" and self.executor is not None:
            self.executor.post(Cancel("Interrupted by a newer message"))
        dropped = False
        while len(self.queue) >= queue_cfg.cap:
            oldest = self.queue.popleft()
            self._positions.pop(oldest.id, None)
            self._accept([oldest])  # its sender learns of the drop from its handle
            dropped = True
            await self.rt.store.drop_runs([oldest.id])
            emit(EventType.QUEUE_DROPPED, session_id=self.id, run_id=oldest.id)
            self.publish(
                Dropped(
                    self.id,
                    oldest.id,
                    reason=(
                        f"The queue is full ({queue_cfg.cap} messages): this older message was dropped."
                    ),
                )
            )
        if dropped:
            self._announce_positions()
        accepted: asyncio.Future[None] | None = None
        if run.persisted:
            await self.rt.store.enqueue(self.id, run.id, run.payload(), now=now)
        else:
            accepted = self._accepting[run.id] = asyncio.get_running_loop().create_future()
        self.queue.append(run)
        self._last_enqueue = now
        self._enqueued.set()
        if busy:
            emit(EventType.QUEUE_ENQUEUED, session_id=self.id, position=len(self.queue))
            self._announce_positions()
        self._wake.set()
        if accepted is not None:
            await accepted
        return handle

    def _accept(self, runs: list[PendingRun], error: BaseException | None = None) -> None:
        """Answer the senders of ``runs`` still waiting in :meth:`submit`: accepted, or
        ``error`` (the worker being stopped is :class:`TurnNotStartedError` to them: their
        own task was not cancelled)."""
        if isinstance(error, asyncio.CancelledError):
            error = TurnNotStartedError(self.id)
        for run in runs:
            waiting = self._accepting.pop(run.id, None)
            if waiting is None or waiting.done():
                continue
            if error is None:
                # on the loop's next round: after what the worker starts now (the turn's
                # LLM request goes out first, and the sender's work overlaps the wait)
                waiting.get_loop().call_soon(_resolve, waiting)
            else:
                waiting.set_exception(error)

    def close(self) -> None:
        """The lane is done (stop, delete): every handle still waiting gets ``TurnError``
        (kind ``stopped``: its turn cannot end in this process), its bus closes, and
        senders of messages handed to its worker but never committed get
        :class:`TurnNotStartedError`."""
        self._end_unfinished(lambda run_id: TurnError(self.id, run_id, "stopped", STOPPED_TEXT))
        self.bus.close()
        self._abandon_unqueued(TurnNotStartedError(self.id))

    def _abandon_unqueued(self, error: BaseException) -> None:
        """The worker stopped for good: runs handed to it but never committed are gone
        (their senders get ``error``; nothing of them was stored)."""
        gone = [r for r in self.queue if not r.persisted]
        if gone:
            self.queue = deque(r for r in self.queue if r.persisted)
            self._accept(gone, error)

    def _announce_positions(self) -> None:
        """Tell every waiting sender its place in the queue whenever it changed.

        A run is told ``Queued(position)`` when it arrives behind a turn and again each
        time the queue moves (a run ahead of it started or was dropped), so a channel's
        "3rd in line" never goes stale. Position 1 = next to run.
        """
        for position, run in enumerate(self.queue, start=1):
            told = self._positions.get(run.id)
            if told == position or (told is None and not run.queued_behind):
                continue
            self._positions[run.id] = position
            self.publish(Queued(self.id, run.id, position=position))

    async def restore_queue(self) -> None:
        """Reload runs persisted before a restart (they resume in order)."""
        for record in await self.rt.store.pending(self.id):
            self.queue.append(PendingRun.from_payload(record.id, record.created_at, record.payload))
        if self.queue:
            self._wake.set()

    async def clear_queue(self, reason: str) -> int:
        runs = list(self.queue)
        self.queue.clear()
        self._positions.clear()
        self._accept(runs)  # their senders learn of the drop from their handles
        self._enqueued.set()  # ends a collect debounce waiting on these runs
        await self.rt.store.drop_runs([r.id for r in runs])
        for r in runs:
            self.publish(Dropped(self.id, r.id, reason=reason))
        return len(runs)

    async def cancel(self, reason: str = "Cancelled by user") -> int:
        """``/stop``: cancel the running turn and clear the queue. Returns cleared count."""
        cleared = await self.clear_queue("Stopped before it ran (/stop).")
        if self.executor is not None:
            self.executor.post(Cancel(reason))
        return cleared

    def pending_approval(self) -> AwaitingApproval | None:
        state = self.executor.state if self.executor is not None else None
        return state if isinstance(state, AwaitingApproval) else None

    def answer(self, request_id: str, decision: Decision) -> bool:
        pending = self.pending_approval()
        if pending is None or pending.request_id != request_id or self.executor is None:
            return False
        emit(
            EventType.APPROVAL_RESOLVED,
            session_id=self.id,
            tool_name=pending.pending.name,
            decision=decision,
        )
        self.executor.post(ApprovalDecision(request_id, decision))
        return True

    # ------------------------------------------------------------ the worker

    async def loop(self) -> None:
        """The supervised worker: recover, then run queued messages forever."""
        try:
            await self._work()
        except asyncio.CancelledError as stopped:
            self._abandon_unqueued(stopped)
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
            if not self.queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            self._in_turn = True
            try:
                runs = await self._take()
                if not runs:
                    continue
                before = self.state
                try:
                    await self._turn(runs)
                except BaseException as exc:
                    self._accept(runs, exc)  # not committed: their senders get the failure
                    if self.state is before:  # no transition committed: still queued in the store
                        self.queue.extendleft(reversed([r for r in runs if r.persisted]))
                    raise
            finally:
                self._in_turn = False
            if any(r.id in self._accepting for r in runs):  # the machine refused the message
                self._accept(runs, TurnNotStartedError(self.id))

    async def _take(self) -> list[PendingRun]:
        cfg = self.rt.settings.queue
        if cfg.mode != "collect":
            run = self.queue.popleft()
            self._positions.pop(run.id, None)
            self._announce_positions()
            return [run]
        if any(r.queued_behind for r in self.queue) and cfg.debounce_ms > 0:
            await self._debounce(cfg.debounce_ms / 1000)
        runs = list(self.queue)
        self.queue.clear()
        self._positions.clear()
        return runs

    async def _debounce(self, window: float) -> None:
        """Collect mode: wait until ``window`` seconds pass without a new message.

        Uses the runtime's clock and sleep (virtual time in tests). A message arriving
        meanwhile restarts the window; ``/stop`` emptying the queue ends the wait.
        """
        while self.queue:
            wait = self._last_enqueue + window - self.rt.clock()
            if wait <= 0:
                return
            self._enqueued.clear()
            sleeper = asyncio.ensure_future(self.rt.sleep(wait))
            arrival = asyncio.ensure_future(self._enqueued.wait())
            try:
                await asyncio.wait((sleeper, arrival), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (sleeper, arrival):
                    task.cancel()
                await asyncio.wait((sleeper, arrival))

    async def _turn(self, runs: list[PendingRun]) -> None:
        primary = runs[0]
        for r in runs[1:]:
            self._aliases[r.id] = primary.id
        now = self.rt.clock()
        reset_cfg = self.rt.settings.reset
        why = reset_due(
            self.last_activity_at,
            now,
            daily_hour=reset_cfg.daily_hour,
            idle_minutes=reset_cfg.idle_minutes,
            session_ttl_seconds=self.rt.settings.session_ttl_seconds,
        )
        if why is not None and (await self.view.get()).messages:
            await self.reset_view(f"automatic reset ({why})")
            self.publish(Notice(self.id, primary.id, f"Started a fresh session: {why}."))
        budget = self.rt.settings.daily_cost_budget_usd
        remaining = None
        if budget is not None:
            spent = await self.rt.store.cost_since(self.agent_id, self.rt.local_day_start(now))
            remaining = budget - spent
        meta = {"run_ids": [r.id for r in runs], "channel": primary.channel}
        if primary.source_message_id is not None:
            meta["source_message_id"] = primary.source_message_id
        message = Message.user(merge_runs(runs), meta=meta)
        self.last_activity_at = now
        await self._run(
            UserMessage(primary.id, message, now, remaining),
            consumed=tuple(r.id for r in runs if r.persisted),
            accepted=lambda: self._accept(runs),
        )

    async def _run(
        self,
        first: UserMessage | Interrupted,
        consumed: tuple[str, ...] = (),
        accepted: Callable[[], None] | None = None,
    ) -> None:
        async with self._turn_lock:
            executor = TurnExecutor(self.context(), self.state, self.deps())
            self.executor = executor
            try:
                self.state = await executor.run(first, consumed_runs=consumed, on_commit=accepted)
            finally:
                self.executor = None
                self.state = executor.state

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

    def deps(self) -> LoopDeps:
        async def compact(reason: Literal["threshold", "overflow"], window: int) -> CompactionDone:
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
        message = f"The agent loop kept crashing ({type(error).__name__ if error else 'exit'}); "
        message += "send a new message to try again."
        self._abandon_unqueued(
            error if isinstance(error, Exception) else TurnNotStartedError(self.id)
        )
        state = self.state
        turn_id = getattr(state, "turn", None)
        tid = turn_id.turn_id if turn_id is not None else None
        new_messages: list[Message] = []
        if is_busy(state):
            result = transition(state, self.context(), Interrupted(CRASH_REASON, resume=False))
            new_messages = [e.message for e in result.effects if isinstance(e, fx.PersistMessage)]
        self.state = Error(error_kind="loop_crash", message=message)
        queued, self.queue = list(self.queue), deque[PendingRun]()
        self._positions.clear()
        stored = False
        try:
            await self.rt.store.commit(
                self.id,
                self.state,
                new_messages,
                now=self.rt.clock(),
                consumed_runs=[r.id for r in queued if r.persisted],
            )
            stored = True
        except Exception as e:  # told below all the same; nothing else can store it
            self._record_fresh = True  # the next worker start keeps Error, not the stored state
            logger.opt(exception=e).error("{}: could not store the loop's crash: {}", self.id, e)
        finally:
            self.view.invalidate()
            emit(EventType.TURN_ERROR, session_id=self.id, kind="loop_crash", stored=stored)
            self.publish(TurnError(self.id, tid, "loop_crash", message))
            for run in queued:
                self.publish(Dropped(self.id, run.id, reason=message))
            self._end_unfinished(lambda run_id: TurnError(self.id, run_id, "loop_crash", message))

    def _end_unfinished(self, terminal: Callable[[str], TurnEvent]) -> None:
        """Give every handle still waiting the terminal event ``terminal(run_id)``: no
        worker is left to end its turn."""
        while self._handles:
            self.publish(terminal(next(iter(self._handles))))

    async def reset_view(self, reason: str) -> None:
        """Start the LLM view afresh (``/reset``, ``/new``, daily/idle reset); history and
        the person's standing ``/always`` grants stay."""
        await self.rt.store.append_marker(self.id, RESET, {"reason": reason}, now=self.rt.clock())
        self.view.invalidate()
        emit(EventType.SESSION_RESET, session_id=self.id, reason=reason)

    def info(self) -> SessionInfo:
        state = self.executor.state if self.executor is not None else self.state
        error = state.message if isinstance(state, Error) else None
        return SessionInfo(
            self.id,
            self.agent_id,
            self.user_id,
            self.channel,
            state.kind,
            len(self.queue),
            self.last_activity_at,
            error,
            self.parent_id,
            self.bus.open_subscriptions(),
        )

    async def settle(self) -> None:
        """Wait until no turn is running and nothing is queued (tests, shutdown)."""
        while self.executor is not None or self.queue:  # noqa: ASYNC110 - two conditions
            await asyncio.sleep(0.01)

    def idle(self) -> bool:
        """No turn running or about to run, nothing queued, and a quiet state."""
        return (
            self.executor is None
            and not self._in_turn
            and not self.queue
            and isinstance(self.state, Idle | Error)
        )
