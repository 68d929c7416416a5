"""The public embedding API: :class:`Core` (docs/embedding.md).

A program embeds BeamClaw's agent runtime in a few lines — a provider, optional tools, a
database — and talks to it through sessions::

    core = Core.create(CoreSettings(), Database(url), provider=provider, tools=registry)
    await core.start()
    handle = await core.send(SessionAddress("local:ann", "default", "tui"), "hello")
    async for event in handle.events():
        ...
    await core.stop()

The gateway, TUI, scheduler and MCP server use the same API. Every session runs under a
supervisor: a crashing loop restarts from persisted state; one failing session never
stalls another.

A session's lane lives in memory only while it is used: maintenance evicts a lane idle
for ``[core.maintenance] lane_idle_seconds`` (:mod:`beamclaw_core.sessions.usage` says
which may go) and the next
call naming the session rebuilds it from the store. The map of lanes changes only under
``Core._lock``; a caller that awaits between finding a lane and using it pins it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import replace

from loguru import logger

from beamclaw_core.agent_settings import AgentSettings
from beamclaw_core.approvals import AlwaysGrant
from beamclaw_core.attachments import check_images
from beamclaw_core.cluster.local import LocalLink
from beamclaw_core.cluster.node import ClusterNode, LaneHost
from beamclaw_core.cluster.ports import ClusterLink
from beamclaw_core.conversation.port import AnswerOutcome, PendingApprovalInfo
from beamclaw_core.identities import Identities
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.inputs import Decision, SubAgentResult
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import Provider
from beamclaw_core.sessions.bus import Subscription, TurnHandle
from beamclaw_core.sessions.commands import parse_command
from beamclaw_core.sessions.composition import CoreHooks, CoreParts, build_runtime, provider_lookup
from beamclaw_core.sessions.ends import SessionEnd, SessionEndHook
from beamclaw_core.sessions.lane import SessionInfo, SessionLane, any_turn_running
from beamclaw_core.sessions.maintenance import Maintenance
from beamclaw_core.sessions.memory_context import TranscriptIndexer
from beamclaw_core.sessions.prompts import StaticPrompt, TurnPrompt, WorkspacePrompt
from beamclaw_core.sessions.runs import PendingRun, SessionAddress
from beamclaw_core.sessions.runtime import ProviderLookup, SystemPromptSource
from beamclaw_core.sessions.usage import LaneUsage
from beamclaw_core.settings import CoreSettings
from beamclaw_core.store import ConversationRecord, ConversationStore, derive_session_id
from beamclaw_core.subagents import SubAgentRunner
from beamclaw_memory import Database, MemoryService, MemorySettings
from beamclaw_obs import Backoff, ChildSpec, EventType, Restart, Supervisor, emit
from beamclaw_tools import ContentPart, ToolPolicy, ToolRegistry

STOP_INDEXING_SECONDS = 10.0
"""How long :meth:`Core.stop` waits for background transcript indexing."""
STOP_HOOKS_SECONDS = 10.0
"""How long :meth:`Core.stop` waits for session-end hooks of the shutdown."""


class Core:
    """BeamClaw's agent runtime: sessions, the agentic loop, persistence and recovery."""

    def __init__(self, parts: CoreParts) -> None:
        """A core made of ``parts`` (:meth:`create` fills the defaults); the composition
        root builds its runtime, given the hooks into this core up front."""
        self._db = parts.database
        self.memory = parts.memory
        self._lanes: dict[str, SessionLane] = {}
        self._supervisor: Supervisor | None = None
        self._maintenance: Maintenance | None = None
        self._lock = asyncio.Lock()
        self._subagents = SubAgentRunner(
            self._open_child,
            self._deliver,
            parts.settings.agentic_loop.subagent_timeout_seconds,
        )
        self._rt = build_runtime(
            parts,
            CoreHooks(
                latest_user_message=self._latest_user_message,
                view_start=self._view_start,
                on_effect=self._on_effect,
                spawn=self._subagents.spawn,
                cancel_children=self._subagents.cancel,
            ),
        )
        self._indexer = (
            TranscriptIndexer(self._rt.store, parts.memory)
            if parts.memory is not None and parts.memory_settings.index_transcripts
            else None
        )
        self._usage = LaneUsage(self._rt.clock)
        # cluster hook: which sessions this node runs (all of them on a single node)
        self._node = ClusterNode(
            parts.link or LocalLink(),
            self._rt.store,
            LaneHost(
                lock=self._lock,
                loaded=self._lanes.get,
                loaded_ids=lambda: list(self._lanes),
                load=self._load_by_id,
                refresh=self._refresh,
                run=self._ensure_running,
            ),
            parts.sleep,
        )
        self.identities = Identities(parts.database, self._rt.clock)
        """Channel accounts linked to persons: an account's messages go to its person's
        sessions (see :mod:`beamclaw_core.identities`)."""
        """When each loaded lane was last used (created, called, a turn ended) and who
        holds it (no eviction meanwhile)."""

    @classmethod
    def create(
        cls,
        settings: CoreSettings | None = None,
        database: Database | str | None = None,
        *,
        provider: Provider | ProviderLookup,
        tools: ToolRegistry | None = None,
        tool_policy: Callable[[str], ToolPolicy | None] | None = None,
        compaction_provider: Provider | None = None,
        system_prompt: SystemPromptSource | str | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        on_effect: Callable[[fx.Effect], None] | None = None,
        subscriber_buffer: int = 1024,
        memory: MemoryService | None = None,
        memory_settings: MemorySettings | None = None,
        agents: Mapping[str, AgentSettings] | None = None,
        link: ClusterLink | None = None,
    ) -> Core:
        """Build a core (nothing runs until :meth:`start`).

        Args:
            settings: the ``[core]`` section (defaults when None).
            database: a :class:`Database` or URL; None = SQLite in ``$BEAMCLAW_HOME``.
            provider: one provider for every agent, or ``agent_id -> Provider``.
            tools: the tool registry (None: the agent has no tools).
            tool_policy: ``agent_id -> ToolPolicy`` narrowing the tools an agent sees.
            compaction_provider: writes compaction summaries (default: the agent's).
            system_prompt: a text, a :class:`SystemPromptSource`, or None for the agent's
                workspace files.
            clock: wall clock (epoch seconds), for tests.
            sleep: the timer behind debounces, retries, approval timeouts and turn
                deadlines; pass a virtual-time sleep together with ``clock`` in tests.
            on_effect: tracing/fault-injection seam called before every effect.
            subscriber_buffer: events buffered per subscriber before it is dropped.
            memory: the agents' memory. Finished turns' transcripts are indexed into it
                in the background; with ``memory_settings.auto_context`` the top hits for
                the user's message are shown to the LLM as a system message each turn.
            memory_settings: the ``[memory]`` section (``auto_context``,
                ``auto_context_limit``); defaults when None.
            agents: ``[agents.<id>]`` sections; an agent's ``autonomy_level`` replaces
                ``[core] autonomy_level`` for its turns (its provider and model are the
                ``provider`` lookup's business). None: every agent uses ``[core]``.
            link: cluster mode's leases, commands and events (docs/scale-out.md); None:
                this node alone runs every session.
        """
        if database is None or isinstance(database, str):
            from beamclaw_memory import resolve_database_url
            from beamclaw_obs import beamclaw_home

            database = Database(resolve_database_url(database, beamclaw_home()))
        core_settings = settings or CoreSettings()
        prompt: SystemPromptSource
        if system_prompt is None:
            prompt = WorkspacePrompt(timezone=core_settings.timezone)
        elif isinstance(system_prompt, str):
            prompt = StaticPrompt(system_prompt)
        else:
            prompt = system_prompt
        return cls(
            CoreParts(
                settings=core_settings,
                database=database,
                providers=provider_lookup(provider),
                system_prompt=prompt,
                clock=clock,
                sleep=sleep,
                tools=tools,
                tool_policy=tool_policy or (lambda _a: None),
                compaction_provider=compaction_provider,
                on_effect=on_effect,
                subscriber_buffer=subscriber_buffer,
                memory=memory,
                memory_settings=memory_settings or MemorySettings(),
                agents=dict(agents or {}),
                link=link,
            )
        )

    @property
    def settings(self) -> CoreSettings:
        return self._rt.settings

    @property
    def store(self) -> ConversationStore:
        return self._rt.store

    # ------------------------------------------------------------ lifecycle

    async def start(self, *, migrate: bool = True, maintenance: bool = True) -> None:
        """Migrate, load the standing ``/always`` grants, recover conversations found
        mid-turn, resume queued runs."""
        if migrate:
            await self._db.migrate()
        await self._rt.always.load()
        await self.identities.load()
        r = self._rt.settings.restart
        self._supervisor = Supervisor(
            "sessions",
            max_restarts=r.max_restarts,
            window_seconds=r.window_seconds,
            backoff=Backoff(initial=r.backoff_seconds, maximum=max(r.backoff_seconds, 1.0)),
        )
        self._node.start()
        busy = set(await self._rt.store.busy())
        with_runs = {p.conversation_id for p in await self._rt.store.pending()}
        for session_id in sorted(busy | with_runs):
            # cluster hook: only sessions whose lease is free (no live node runs them)
            await self._node.pickup(session_id, restart=session_id in busy)
        if maintenance:
            self._maintenance = Maintenance(
                self._rt,
                self._lanes_snapshot,
                self._lane_by_id,
                delete_inactive=self._delete_inactive,
                evict_idle=self._evict_idle,
            )
            self._maintenance.start()

    async def stop(self) -> None:
        """Stop every loop (turns in flight stay persisted mid-turn and recover next start)."""
        if self._maintenance is not None:
            await self._maintenance.stop()
        await self._subagents.stop()
        if self._supervisor is not None:
            await self._supervisor.stop()
        for lane in self._lanes.values():
            lane.close()
            self._ended(lane, "shutdown")
        self._lanes.clear()
        await self._node.stop()  # cluster hook: the leases go once no lane can write
        await self._rt.ends.drain(STOP_HOOKS_SECONDS)
        if isinstance(self._rt.system_prompt, TurnPrompt):
            await self._rt.system_prompt.drain(STOP_INDEXING_SECONDS)
        self._usage.clear()
        if self._indexer is not None:
            await self._indexer.drain(grace_seconds=STOP_INDEXING_SECONDS)

    # ------------------------------------------------------------ sessions

    def person(self, address: SessionAddress) -> SessionAddress:
        """``address`` as its person speaks: the user id is the person's session key when
        the account is linked (:mod:`beamclaw_core.identities`), else unchanged."""
        key = self.identities.session_key(address.user_id)
        return address if key == address.user_id else replace(address, user_id=key)

    def session_id(self, address: SessionAddress) -> str:
        """The id of the session ``address`` talks to (``shared``/``per_channel``), the
        same for every linked account of one person."""
        address = self.person(address)
        return derive_session_id(
            address.user_id, address.agent_id, address.channel, self._rt.settings.session_sharing
        )

    async def send(
        self,
        address: SessionAddress,
        content: str | tuple[ContentPart, ...],
        *,
        source_message_id: str | None = None,
        session_id: str | None = None,
        drafts: bool = True,
        scheduled: bool = False,
        model: str | None = None,
    ) -> TurnHandle:
        """Send a message (or an in-chat command) and get the handle of its turn.

        ``session_id`` names the conversation explicitly (an API client's own session
        id); by default it is derived from ``address`` (:meth:`session_id`).

        ``drafts=False``: the sender only wants the finished answer, not ``TextChunk``
        drafts. Each LLM call of a turn streams while any subscriber of the session
        (a handle or :meth:`subscribe`) wants drafts; when none does it is one
        non-streaming request, which costs less to make and to read.

        ``scheduled``: the scheduler sends it (a job, a heartbeat), not a person; in
        ``collect`` mode it is never merged with queued messages of people.

        ``model``: answer this turn with that model of the agent's provider (a heartbeat's
        cheaper model); None: the agent's own.

        Raises:
            AttachmentError: an image of ``content`` breaks ``[core.attachments]``
                (nothing was queued; a front end answers its sender with a 4xx).
        """
        content = check_images(content, self._rt.settings.attachments.limits())
        lane = await self._lane(self.person(address), session_id=session_id, pin=True)
        try:
            owned = self._node.owns(lane.id)  # cluster hook: run here, or hand it over
            if not owned:
                async with self._lock:
                    owned = await self._node.own(lane) is not None
            if not owned:
                return await self._forward(
                    lane, content, source_message_id, address.channel, drafts, scheduled, model
                )
            self._ensure_running(lane)
            handle = await lane.submit(
                content,
                source_message_id=source_message_id,
                channel=address.channel,
                drafts=drafts,
                scheduled=scheduled,
                model=model,
            )
            self._node.release_when_idle(lane.id)
            return handle
        finally:
            self._usage.unpin(lane.id)

    @property
    def cluster_link(self) -> ClusterLink:
        """This node's link to the cluster (a :class:`LocalLink` alone): channels hold
        cluster-wide duties through it (:func:`~beamclaw_core.cluster.hold_duty`)."""
        return self._node.link

    async def subscribe(self, session_id: str, *, after_seq: int | None = None) -> Subscription:
        """Every event of a session from now on, whichever channel started the turn.

        With ``after_seq`` (the ``seq`` of the last event a client saw), the kept events
        numbered above it come first, then the live ones, each once. A number older than
        what the session keeps raises :class:`ReplayGapError` (reload the history), one
        never given out :class:`FutureSequenceError`."""
        lane = await self._require(session_id)
        if after_seq is not None:
            await self._node.catch_up(lane)  # cluster hook: resume a stream read elsewhere
        return lane.subscribe(after_seq)

    def on_session_end(self, hook: SessionEndHook) -> Callable[[], None]:
        """Call ``hook`` whenever a session ends: its context starts afresh (``/new``,
        ``/reset``, the daily or idle reset) or its lane closes (idle eviction, delete,
        stop); see :class:`SessionEnd`. Hooks run in their own tasks (a failure is
        logged, never raised); :meth:`stop` waits for those of the shutdown. Returns the
        hook's removal."""
        return self._rt.ends.add(hook)

    async def event_seq(self, session_id: str) -> int:
        """The number of the session's latest event: a client that has read the history
        subscribes from it and misses nothing published since."""
        lane = await self._require(session_id)
        return await self._node.event_seq(lane)  # cluster hook: the owner's numbering

    async def answer_approval(self, session_id: str, request_id: str, decision: Decision) -> bool:
        """Answer an ``ApprovalRequested``; False when it is not (or no longer) pending."""
        lane = self._lanes.get(session_id)
        if lane is not None and self._node.owns(session_id):
            return lane.answer(request_id, decision)
        return await self._node.answer(session_id, request_id, decision)  # cluster hook

    async def pending_approvals(self, session_id: str | None = None) -> list[PendingApprovalInfo]:
        """Tool calls waiting for a decision (of one session, or of every session)."""
        lanes = [self._lanes.get(session_id)] if session_id is not None else self._lanes_snapshot()
        out: list[PendingApprovalInfo] = []
        for lane in lanes:
            pending = lane.pending_approval() if lane is not None else None
            if lane is not None and pending is not None:
                out.append(
                    PendingApprovalInfo(
                        lane.id,
                        pending.request_id,
                        lane.agent_id,
                        pending.pending.name,
                        dict(pending.pending.args),
                    )
                )
        return out + await self._node.others_approvals(session_id)  # cluster hook

    async def answer_approval_by_id(
        self, request_id: str, decision: Decision
    ) -> tuple[AnswerOutcome, PendingApprovalInfo | None]:
        """Answer a pending approval known only by its id (REST, another channel).

        ``answered`` with what was pending; ``already_answered`` when this request was
        answered before (the first answer stands); ``unknown`` when no session has it
        pending (wrong id, expired, or its turn ended)."""
        for lane in self._lanes_snapshot():
            pending = lane.pending_approval()
            if pending is not None and pending.request_id == request_id:
                info = PendingApprovalInfo(
                    lane.id,
                    request_id,
                    lane.agent_id,
                    pending.pending.name,
                    dict(pending.pending.args),
                )
                if lane.answer(request_id, decision):
                    return "answered", info
            if lane.answered(request_id):
                return "already_answered", None
        asked = self._node.remote_approval(request_id)  # cluster hook: a turn elsewhere
        if asked is not None and await self._node.answer(asked.session_id, request_id, decision):
            lane = self._lanes.get(asked.session_id)
            agent = lane.agent_id if lane is not None else ""
            info = PendingApprovalInfo(
                asked.session_id, request_id, agent, asked.tool, dict(asked.args)
            )
            return "answered", info
        stored = next(  # cluster hook: a turn elsewhere this node does not follow
            (p for p in await self._node.others_approvals(None) if p.request_id == request_id),
            None,
        )
        if stored is not None and await self._node.answer(stored.session_id, request_id, decision):
            return "answered", stored
        return "unknown", None

    async def always_grants(
        self, *, agent_id: str | None = None, user_id: str | None = None
    ) -> list[AlwaysGrant]:
        """Standing ``/always`` grants (of one agent and/or person), from the database."""
        return await self._rt.always.list(agent_id=agent_id, user_id=user_id)

    async def revoke_always(self, agent_id: str, user_id: str, tool: str | None = None) -> int:
        """End ``user_id``'s grant of ``tool`` to ``agent_id`` (``tool`` None: all of them).

        Returns how many ended; every session of that person asks again from its next turn.
        """
        return await self._rt.always.revoke(agent_id, user_id, tool)

    async def cancel(self, session_id: str) -> int:
        """``/stop``: cancel the running turn and clear the queue; returns cleared count."""
        lane = self._lanes.get(session_id)
        if lane is None or not self._node.owns(session_id):
            await self._node.cancel(session_id)  # cluster hook: the owner stops it
            return 0
        return await lane.cancel()

    async def list_sessions(self) -> list[SessionInfo]:
        out: list[SessionInfo] = []
        for record in await self._rt.store.list():
            lane = self._lanes.get(record.id)
            if lane is not None and self._node.runs_here(record.id):  # cluster hook
                out.append(lane.info())
            else:
                out.append(
                    SessionInfo(
                        record.id,
                        record.agent_id,
                        record.user_id,
                        record.channel,
                        record.state.kind,
                        0,
                        record.last_activity_at,
                    )
                )
        return out

    async def status(self, session_id: str) -> SessionInfo:
        lane = await self._require(session_id)
        stored = await self._node.others_info(session_id, lane.bus.open_subscriptions())
        return lane.info() if stored is None else stored  # cluster hook: the owner's state

    async def history(self, session_id: str, *, view: bool = False) -> list[Message]:
        """Every stored message (``view=True``: only what the LLM currently sees)."""
        if view:
            return list((await self._rt.store.view(session_id)).messages)
        rows = await self._rt.store.messages(session_id)
        return [r.message for r in rows if r.message is not None]

    async def reset(self, session_id: str) -> None:
        """Cancel, clear the queue and start a fresh view (raw history stays)."""
        lane = await self._require(session_id, pin=True)
        try:
            async with self._lock:  # cluster hook: only the owner writes the marker
                owned = await self._node.own(lane) is not None
            if not owned:  # the owner resets it, as for an in-chat /reset
                await (await self._node.forward_command(lane, "/reset", False)).result()
                return
            with lane.acting():
                await lane.cancel("Cancelled by reset")
                await lane.settle()
                await lane.reset_view("reset")
        finally:
            self._usage.unpin(lane.id)

    async def delete(self, session_id: str) -> bool:
        """Stop the session and delete it with its history (its lane leaves memory: a
        later message starts a new conversation under the same id)."""
        async with self._lock:
            lane = self._lanes.pop(session_id, None)
            if lane is not None:
                await lane.cancel("Session deleted")
                await self._retire(lane, "deleted")  # the session's end
            record = None if lane is not None else await self._rt.store.get(session_id)
            deleted = await self._rt.store.delete(session_id)
            if record is not None and deleted:
                self._rt.ends.fire(
                    SessionEnd(session_id, record.agent_id, record.user_id, "deleted", closed=True)
                )
            return deleted

    def turns_running(self) -> bool:
        """Whether any loaded session is not idle (a turn running, queued or waiting)."""
        return any_turn_running(self._lanes.values())

    def loaded_sessions(self) -> list[str]:
        """Ids of the sessions whose lane is in memory now (the others are rebuilt from the
        store when next used)."""
        return list(self._lanes)

    async def flush_indexing(self) -> None:
        """Index the finished turns scheduled so far now, instead of after the batch window
        (what ``stop`` does first; benchmarks and tests that must know indexing is done)."""
        if self._indexer is not None:
            await self._indexer.drain()

    async def wait_idle(self, session_id: str) -> None:
        """Wait until the session has no running turn and nothing queued."""
        lane = self._lanes.get(session_id)
        if lane is not None:
            await lane.settle()

    # ------------------------------------------------------------ internals

    def _on_effect(self, effect: fx.Effect) -> None:
        """Runs before every effect, after the embedder's hook: transcript indexing when a
        turn ends (its messages are committed before its effects run)."""
        if (
            self._indexer is not None
            and isinstance(effect, fx.NotifyClient)
            and effect.event.terminal
        ):
            lane = self._lanes.get(effect.event.session_id)
            if lane is not None:
                self._indexer.schedule(lane.id, lane.agent_id)
        if isinstance(effect, fx.NotifyClient) and effect.event.terminal:
            session_id = effect.event.session_id
            if session_id in self._lanes:
                self._usage.use(session_id)
                self._node.release_when_idle(session_id)  # cluster hook

    async def _view_start(self, session_id: str) -> int | None:
        """The ``seq`` of the first message of the session's LLM view (None: no lane)."""
        lane = self._lanes.get(session_id)
        return None if lane is None else (await lane.view.get()).first_seq

    async def _latest_user_message(self, session_id: str) -> tuple[Hashable, str | None]:
        """``(turn key, text)`` of the user message that started the session's current
        turn, from the lane's in-memory view (no query)."""
        lane = self._lanes.get(session_id)
        if lane is None:
            return None, None
        view = await lane.view.get()
        for position in range(len(view.messages) - 1, -1, -1):
            message = view.messages[position]
            if message.role is Role.USER:
                runs = message.meta.get("run_ids")
                key = tuple(runs) if isinstance(runs, list) and runs else (position, message.text)
                return key, message.text
        return None, None

    def _lanes_snapshot(self) -> list[SessionLane]:
        return list(self._lanes.values())

    async def _lane(
        self,
        address: SessionAddress,
        parent_id: str | None = None,
        session_id: str | None = None,
        *,
        pin: bool = False,
    ) -> SessionLane:
        sid = session_id or self.session_id(address)
        async with self._lock:
            lane = self._lanes.get(sid)
            if lane is None:
                record = await self._rt.store.ensure(
                    sid,
                    agent_id=address.agent_id,
                    user_id=address.user_id,
                    channel=address.channel,
                    now=self._rt.clock(),
                    parent_id=parent_id,
                )
                lane = self._load(record)
                emit(EventType.SESSION_START, session_id=sid, user_id=address.user_id)
            return self._use(lane, pin)

    async def _lane_by_id(self, session_id: str, *, pin: bool = False) -> SessionLane | None:
        lane = self._lanes.get(session_id)
        if lane is not None:
            return self._use(lane, pin)
        record = await self._rt.store.get(session_id)
        if record is None:
            return None
        async with self._lock:
            lane = self._lanes.get(session_id) or self._load(record)
            return self._use(lane, pin)

    async def _load_by_id(self, session_id: str) -> SessionLane | None:
        """The loaded lane, else one from the store (the caller holds ``_lock``)."""
        lane = self._lanes.get(session_id)
        if lane is not None:
            return lane
        record = await self._rt.store.get(session_id)
        return None if record is None else self._load(record)

    async def _refresh(self, lane: SessionLane) -> None:
        """Another node wrote ``lane``'s session: its worker stops, it re-reads the store."""
        await self._stop_worker(lane.id)
        lane.stale()
        self._rt.store.forget(lane.id)

    async def _stop_worker(self, session_id: str) -> None:
        sup = self._supervisor
        if sup is not None and sup.has_child(session_id):
            await sup.stop_child(session_id)
            sup.remove_child(session_id)

    async def _forward(
        self,
        lane: SessionLane,
        content: str | tuple[ContentPart, ...],
        source_message_id: str | None,
        channel: str | None,
        drafts: bool,
        scheduled: bool,
        model: str | None = None,
    ) -> TurnHandle:
        """Cluster hook: another node owns the session. An in-chat command goes to it
        over the command channel and is answered there; a message is queued for it
        durably (the owner is woken)."""
        if isinstance(content, str) and parse_command(content) is not None:
            return await self._node.forward_command(lane, content, drafts)
        run = PendingRun(
            uuid.uuid4().hex,
            content,
            self._rt.clock(),
            source_message_id,
            channel or lane.channel,
            queued_behind=True,
            scheduled=scheduled,
            model=model,
        )
        return await self._node.forward(lane, run, drafts)

    def _load(self, record: ConversationRecord) -> SessionLane:
        """A lane for ``record`` into the map (the caller holds ``_lock``)."""
        lane = SessionLane(self._rt, record)
        self._lanes[record.id] = lane
        return lane

    def _use(self, lane: SessionLane, pin: bool) -> SessionLane:
        """Note a use of ``lane`` (synchronously: eviction cannot come between)."""
        self._usage.use(lane.id, pin=pin)
        return lane

    async def _evict_idle(self, idle_seconds: float) -> list[str]:
        """Drop every lane idle for ``idle_seconds`` (maintenance); their ids."""
        async with self._lock:
            gone = [
                lane for lane in self._lanes.values() if self._usage.evictable(lane, idle_seconds)
            ]
            for lane in gone:
                del self._lanes[lane.id]
            for lane in gone:
                await self._retire(lane, "idle")
            return [lane.id for lane in gone]

    async def _delete_inactive(self, before: float) -> list[str]:
        """History retention (maintenance): delete sessions last active before ``before``
        that are not in use; their lanes leave memory."""
        async with self._lock:
            keep = [sid for sid, lane in self._lanes.items() if not self._usage.evictable(lane, 0)]
            deleted = await self._rt.store.delete_inactive(before, keep=keep)
            for session_id in deleted:
                lane = self._lanes.pop(session_id, None)
                if lane is not None:
                    await self._retire(lane, "deleted")
            return deleted

    async def _retire(self, lane: SessionLane, reason: str) -> None:
        """``lane`` (already out of the map) stops: its worker, its bus, its bookkeeping."""
        await self._stop_worker(lane.id)
        lane.close()
        self._usage.forget(lane.id)
        self._rt.store.forget(lane.id)
        await self._node.leases.release(lane.id)  # cluster hook: the lane's end
        self._ended(lane, reason)

    def _ended(self, lane: SessionLane, reason: str) -> None:
        self._rt.ends.fire(SessionEnd(lane.id, lane.agent_id, lane.user_id, reason, closed=True))

    async def _require(self, session_id: str, *, pin: bool = False) -> SessionLane:
        lane = await self._lane_by_id(session_id, pin=pin)
        if lane is None:
            from beamclaw_core.sessions.errors import UnknownSessionError

            raise UnknownSessionError(session_id)
        return lane

    def _ensure_running(self, lane: SessionLane) -> None:
        sup = self._supervisor
        if sup is None:
            raise RuntimeError("Core.start() has not been called")
        status = sup.child_status(lane.id)
        if status is not None and status.state.value in ("running", "restarting"):
            return
        if status is not None:
            sup.remove_child(lane.id)
        emit(
            EventType.AGENT_START, session_id=lane.id, agent_id=lane.agent_id, user_id=lane.user_id
        )
        sup.start_child(
            ChildSpec(
                id=lane.id,
                start=lane.loop,
                restart=Restart.TRANSIENT,
                on_give_up=lane.give_up,
            )
        )

    async def _open_child(self, parent_id: str, child_id: str, agent_id: str | None) -> SessionLane:
        parent = self._lanes[parent_id]
        address = SessionAddress(parent.user_id, agent_id or parent.agent_id, parent.channel)
        lane = await self._lane(address, parent_id=parent_id, session_id=child_id)
        async with self._lock:  # cluster hook: a child runs where its parent does
            await self._node.own(lane)
        self._ensure_running(lane)
        return lane

    def _deliver(self, parent_id: str, result: SubAgentResult) -> None:
        lane = self._lanes.get(parent_id)
        if lane is not None and lane.executor is not None:
            lane.executor.post(result)
        else:
            logger.debug("{}: sub-agent result for a finished turn dropped", parent_id)
