"""This node's part in a cluster: which sessions it runs, and what it hears of the others.

The async shell around a :class:`~beamclaw_core.cluster.ClusterLink` that the
:class:`~beamclaw_core.api.Core` consults at a few marked hook points:

* a message for a session another node owns is queued durably (``pending_runs``) and the
  owner woken; the sender's handle is fed from the owner's relayed events;
* a node owns a session only while it works on it: the lease is taken when work arrives
  and given up when the lane is idle with nothing stored for it (one node alone never
  gives it up before the lane leaves memory);
* a sweep takes over sessions left mid-turn or with queued runs whose lease is free (the
  owner died: recovered as after a restart), as start-up does;
* events of sessions this node shows but does not own arrive from the owner; approval
  answers, ``/stop`` and in-chat commands for them go to the owner (a command's answer
  comes back relayed under the run id its sender waits on); their pending approvals and
  state are what their owner stored (:mod:`~beamclaw_core.cluster.stored_view`).

Invariant: the lane map changes only under the host's lock, and so does ownership.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from loguru import logger

from beamclaw_core.cluster.commands import Command
from beamclaw_core.cluster.lease import sweep_interval
from beamclaw_core.cluster.leases import SessionLeases
from beamclaw_core.cluster.ports import ClusterLink
from beamclaw_core.cluster.stored_view import stored_approval, stored_info
from beamclaw_core.conversation.port import PendingApprovalInfo
from beamclaw_core.loop.inputs import Decision
from beamclaw_core.loop.turn_events import ApprovalRequested, ApprovalResolved, TurnEvent
from beamclaw_core.sessions.bus import TurnHandle
from beamclaw_core.sessions.control import SessionInfo
from beamclaw_core.sessions.lane import SessionLane
from beamclaw_core.sessions.runs import PendingRun
from beamclaw_core.store import ConversationStore

_RECHECK_SECONDS = 0.05
COMMAND_ANSWER_SECONDS = 30.0
"""How long an in-chat command forwarded to the owner may take to be answered."""
COMMAND_UNANSWERED = (
    "The node running this session did not answer this command in time; send it again."
)


@dataclass(frozen=True, slots=True)
class LaneHost:
    """What the node needs of the core that holds the lanes (its bound methods)."""

    lock: asyncio.Lock
    """The lock under which the lane map changes."""
    loaded: Callable[[str], SessionLane | None]
    loaded_ids: Callable[[], Collection[str]]
    load: Callable[[str], Awaitable[SessionLane | None]]
    """The lane from the store into the map (the caller holds :attr:`lock`)."""
    refresh: Callable[[SessionLane], Awaitable[None]]
    """Another node wrote the session: stop the lane's worker (its handles and
    subscribers stay) and make it read its state and view again before it works."""
    run: Callable[[SessionLane], None]
    """Start the lane's worker unless it runs."""


class ClusterNode:
    """Ownership of sessions for one core (see the module)."""

    def __init__(
        self,
        link: ClusterLink,
        store: ConversationStore,
        host: LaneHost,
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self.link = link
        self._store = store
        self._host = host
        self._sleep = sleep
        self.leases = SessionLeases(link, store.fences, sleep, self._lost)
        self._tasks: set[asyncio.Task[None]] = set()
        self._remote_approvals: dict[str, ApprovalRequested] = {}
        """Approvals pending in turns other nodes run, by request id (from their events)."""

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._spawn(self.link.serve(self))
        self._spawn(self.leases.renew_forever())
        if self.link.shared:
            self._spawn(self._sweep_forever())

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.leases.release_all()
        await self.link.close()

    # ------------------------------------------------------------ hook points of Core

    async def own(self, lane: SessionLane) -> bool | None:
        """Own ``lane``'s session (the caller holds the host's lock). True: another node
        owned it since this one last did, so the lane was refreshed (re-reads the store,
        recovering a turn left mid-way); False: owned, nothing changed; None: another
        node owns it."""
        claim = await self.leases.claim(lane.id)
        if claim is None:
            return None
        if claim.stale:
            await self._host.refresh(lane)
            # number on from the last owner's events
            lane.publisher.journal.advance(await self._relayed_seq(lane.id))
        return claim.stale

    async def forward(self, lane: SessionLane, run: PendingRun, drafts: bool) -> TurnHandle:
        """Queue ``run`` durably for the owner of ``lane``'s session and wake it; the
        handle ends with the owner's terminal event for it (relayed)."""
        handle = lane.publisher.open(run.id, drafts)
        await self.link.follow(lane.id)
        await self._store.enqueue(lane.id, run.id, run.payload(), now=run.created_at)
        await self.link.tell(Command("wake", lane.id))
        return handle

    async def forward_command(self, lane: SessionLane, text: str, drafts: bool) -> TurnHandle:
        """Send the in-chat command ``text`` to the owner of ``lane``'s session; the
        handle ends with the owner's answer (relayed), or — when none comes within
        :data:`COMMAND_ANSWER_SECONDS` (the owner let the session go meanwhile, or died) —
        with a notice to send it again."""
        run_id = uuid.uuid4().hex
        handle = lane.publisher.open(run_id, drafts)
        await self.link.follow(lane.id)
        await self.link.tell(Command("chat", lane.id, run_id, text=text))
        self._spawn(self._unanswered(lane, run_id))
        return handle

    async def _unanswered(self, lane: SessionLane, run_id: str) -> None:
        await self._sleep(COMMAND_ANSWER_SECONDS)
        if lane.publisher.waiting(run_id):
            lane.publisher.reply(run_id, COMMAND_UNANSWERED, here=True)

    async def event_seq(self, lane: SessionLane) -> int:
        """The number of the session's latest event: the last one relayed when another
        node runs it (cluster mode; a client may subscribe from it at any node), else
        this node's own."""
        if self.link.shared and not self.leases.held(lane.id):
            relayed = await self._relayed_seq(lane.id)
            if relayed > 0:
                return relayed
        return lane.publisher.last_seq

    async def _relayed_seq(self, session_id: str) -> int:
        """The number of the session's last relayed event (0: none); the newest entries
        may be unnumbered (``RunsMerged``)."""
        return max((e.seq for e in await self.link.recent(session_id, 4)), default=0)

    async def catch_up(self, lane: SessionLane) -> None:
        """Before a client resumes ``lane``'s stream here (cluster mode, another node
        runs the session): follow its events from now on, and keep what was relayed so
        far under the owner's numbers, so the client resumes instead of reloading."""
        if not self.link.shared or self.leases.held(lane.id):
            return
        await self.link.follow(lane.id)
        capacity = lane.publisher.journal.capacity
        events = await self.link.recent(lane.id, capacity)
        lane.publisher.backfill(events, complete=len(events) < capacity)

    async def answer(self, session_id: str, request_id: str, decision: Decision) -> bool:
        """Send an approval answer to the owner (True: sent; the owner takes it once)."""
        if not self.link.shared:
            return False
        await self.link.tell(Command("answer", session_id, request_id, decision))
        return True

    async def cancel(self, session_id: str) -> None:
        if self.link.shared:
            await self.link.tell(Command("cancel", session_id))

    def owns(self, session_id: str) -> bool:
        return self.leases.held(session_id)

    def runs_here(self, session_id: str) -> bool:
        """This node's lane of the session is the truth: it is alone, or owns it."""
        return not self.link.shared or self.owns(session_id)

    async def others_approvals(self, session_id: str | None) -> list[PendingApprovalInfo]:
        """Approvals the turns of sessions other nodes run wait for (of one session, or of
        all), as their owners stored them; none on a single node."""
        if not self.link.shared:
            return []
        ids = [session_id] if session_id is not None else await self._store.busy()
        out: list[PendingApprovalInfo] = []
        for conversation_id in ids:
            record = None if self.owns(conversation_id) else await self._store.get(conversation_id)
            pending = stored_approval(record) if record is not None else None
            if pending is not None:
                out.append(pending)
        return out

    async def others_info(self, session_id: str, subscribers: int) -> SessionInfo | None:
        """The session as the node running it stored it, None when this node runs it (or
        is alone: its lane is the truth) or it is unknown."""
        if self.runs_here(session_id):
            return None
        record = await self._store.get(session_id)
        if record is None:
            return None
        queued = len(await self._store.pending(session_id))
        return stored_info(record, queued, subscribers)

    async def pickup(self, session_id: str, *, restart: bool) -> bool:
        """Run ``session_id`` here if its lease can be had: recover it when it was left
        mid-turn (``restart``: as after a restart), resume its stored runs. False: another
        node owns it, or it no longer exists."""
        host = self._host
        async with host.lock:
            lane = host.loaded(session_id)
            fresh = lane is None
            if lane is None:
                # claimed before loaded: a lane this node cannot own never enters the
                # map, where a request could take it up just before it left again
                if await self.leases.claim(session_id) is None:
                    return False
                lane = await host.load(session_id)
                if lane is None:
                    await self.leases.release(session_id)
                    return False
                lane.publisher.journal.advance(await self._relayed_seq(session_id))
                stale = True  # read from the store just now
            else:
                stale = await self.own(lane)
                if stale is None:
                    return False
            if fresh or stale or lane.idle():
                await lane.restore_queue()
            lane.recover_as_restart = restart
            host.run(lane)
        self.release_when_idle(session_id)
        return True

    def release_when_idle(self, session_id: str) -> None:
        """After the session's work ends, give its lease up (cluster mode only)."""
        if self.link.shared:
            self._spawn(self._release_when_idle(session_id))

    # ------------------------------------------------------------ LinkInbox

    def watched(self) -> Collection[str]:
        return [sid for sid in self._host.loaded_ids() if not self.leases.held(sid)]

    def on_event(self, event: TurnEvent) -> None:
        if isinstance(event, ApprovalRequested):
            self._remote_approvals[event.request_id] = event
        elif isinstance(event, ApprovalResolved) or event.terminal:
            self._remote_approvals = {
                rid: asked
                for rid, asked in self._remote_approvals.items()
                if asked.session_id != event.session_id
                and not (isinstance(event, ApprovalResolved) and rid == event.request_id)
            }
        lane = self._host.loaded(event.session_id)
        if lane is not None and not self.leases.held(event.session_id):
            lane.publisher.mirror(event)

    def remote_approval(self, request_id: str) -> ApprovalRequested | None:
        """The approval ``request_id`` if a turn on another node waits for it."""
        return self._remote_approvals.get(request_id)

    async def on_command(self, command: Command) -> None:
        sid = command.session_id
        if command.kind == "wake":
            await self.pickup(sid, restart=False)
            return
        lane = self._host.loaded(sid)
        if lane is None or not self.leases.held(sid):
            return
        if command.kind == "cancel":
            await lane.cancel()
        elif command.kind == "chat" and command.request_id is not None:
            self._spawn(_run_command(lane, command.text or "", command.request_id))
        elif command.request_id is not None and command.decision is not None:
            lane.answer(command.request_id, command.decision)

    # ------------------------------------------------------------ internals

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.opt(exception=task.exception()).error("cluster task failed")

    async def _release_when_idle(self, session_id: str) -> None:
        while True:
            lane = self._host.loaded(session_id)
            if lane is None:
                return
            await lane.settle()
            async with self._host.lock:
                lane = self._host.loaded(session_id)
                if lane is None or not self.leases.held(session_id):
                    return
                if lane.idle():
                    if not await self._store.pending(session_id):
                        await self.leases.release(session_id)
                        return
                    await lane.restore_queue()  # queued by another node meanwhile
                    self._host.run(lane)
                    continue
            await self._sleep(_RECHECK_SECONDS)  # settled but not idle (a failed state)

    async def _sweep_forever(self) -> None:
        while True:
            await self._sleep(sweep_interval(self.link.lease_seconds))
            try:
                await self.sweep()
            except Exception:  # a store or link outage: the next sweep tries again
                logger.opt(exception=True).warning("cluster sweep failed")

    async def sweep(self) -> None:
        """Take over what a dead node left: sessions mid-turn or with queued runs whose
        lease is free."""
        busy = set(await self._store.busy())
        queued = {p.conversation_id for p in await self._store.pending()}
        for session_id in sorted(busy | queued):
            if not self.leases.held(session_id):
                await self.pickup(session_id, restart=session_id in busy)

    async def _lost(self, session_id: str) -> None:
        """The lease lapsed (this node paused, or the link failed): stop the worker; the
        lane stays to show the new owner's events."""
        async with self._host.lock:
            lane = self._host.loaded(session_id)
            if lane is not None:
                await self._host.refresh(lane)


async def _run_command(lane: SessionLane, text: str, run_id: str) -> None:
    """An in-chat command another node forwarded, answered under its run id (in a task
    of its own: ``/new`` may take a while, and the command channel must go on)."""
    await lane.submit(text, run_id=run_id)
