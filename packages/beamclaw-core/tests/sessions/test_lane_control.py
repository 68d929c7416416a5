"""The lane's control operations, called through :class:`LaneControl` (what in-chat
commands and compaction hold), on a real lane: SQLite store, running worker, scripted
provider. And the commands themselves against a recording control: they need nothing
of the lane beyond the protocol.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from beamclaw_core.approvals import AlwaysAllowlist
from beamclaw_core.loop import Accepted, ApprovalRequested, Cancelled, Dropped, Queued
from beamclaw_core.loop import effects as fx
from beamclaw_core.loop.executor import ViewCache
from beamclaw_core.loop.inputs import Decision
from beamclaw_core.loop.ports import LoopDeps
from beamclaw_core.loop.states import AwaitingApproval
from beamclaw_core.sessions.commands import run_command
from beamclaw_core.sessions.control import LaneControl, SessionInfo
from beamclaw_core.sessions.lane import SessionLane
from beamclaw_core.sessions.prompts import StaticPrompt
from beamclaw_core.sessions.runtime import Runtime
from beamclaw_core.settings import CoreSettings
from beamclaw_core.store import ConversationStore
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_memory import Database
from beamclaw_tools import Autonomy, SessionRef, ToolRegistry

from .conftest import EchoTool, make_settings


@dataclass
class Lanes:
    """Builds real lanes on one migrated database and runs their workers."""

    db: Database
    lanes: list[tuple[SessionLane, asyncio.Task[None]]] = field(
        default_factory=list[tuple[SessionLane, asyncio.Task[None]]]
    )

    async def lane(
        self, provider: Any, *tools: EchoTool, settings: CoreSettings | None = None
    ) -> SessionLane:
        registry = ToolRegistry()
        for tool in tools:
            registry.register(tool)
        rt = runtime(self.db, settings or make_settings(), tools=registry, provider=provider)
        await rt.always.load()
        record = await rt.store.ensure(
            f"s{len(self.lanes)}", agent_id="default", user_id="local:ann", channel="tui", now=1.0
        )
        lane = SessionLane(rt, record)
        self.lanes.append((lane, asyncio.create_task(lane.loop())))
        return lane


def runtime(
    db: Database, settings: CoreSettings, *, tools: ToolRegistry | None, provider: Any
) -> Runtime:
    return Runtime(
        settings=settings,
        store=ConversationStore(db),
        provider_for=lambda _agent: provider,
        system_prompt=StaticPrompt("You are a test agent."),
        clock=time.time,
        always=AlwaysAllowlist(db, time.time),
        tools=tools,
        on_effect=lambda _effect: None,
        spawn=no_children,
        cancel_children=no_cancel,
    )


async def no_children(_parent_id: str, _effect: fx.SpawnSubAgents) -> None:
    raise AssertionError("these tests spawn no sub-agents")


async def no_cancel(_child_ids: tuple[str, ...]) -> None:
    return None


@pytest.fixture
async def lanes(db_url: str) -> AsyncIterator[Lanes]:
    db = Database(db_url)
    await db.migrate()
    made = Lanes(db)
    yield made
    for lane, worker in made.lanes:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        lane.close()
    await db.dispose()


async def first_of(handle: Any, kind: type) -> Any:
    async for event in handle.events():
        if isinstance(event, kind):
            return event
    raise AssertionError(f"no {kind.__name__}")


# ---------------------------------------------------------------- operations on a real lane


async def test_cancel_drops_the_queue_and_cancels_the_turn(lanes: Lanes) -> None:
    lane = await lanes.lane(ScriptedProvider([Hang()]), settings=make_settings())
    control: LaneControl = lane
    running = await lane.submit("hang")
    await first_of(running, Accepted)
    queued = [await lane.submit(f"m{i}") for i in range(2)]
    assert control.turn_running()
    assert await control.cancel("Cancelled by a test") == 2
    assert control.info().queued == 0
    for handle in queued:
        assert isinstance(await handle.result(), Dropped)
    cancelled = await running.result()
    assert isinstance(cancelled, Cancelled) and cancelled.reason == "Cancelled by a test"
    assert await lane.rt.store.pending(lane.id) == [], "dropped runs leave the stored queue"


async def test_turn_running_only_while_a_turn_is_in_progress(lanes: Lanes) -> None:
    lane = await lanes.lane(ScriptedProvider([Hang()]))
    control: LaneControl = lane
    assert not control.turn_running()
    handle = await lane.submit("hang")
    await first_of(handle, Accepted)
    assert control.turn_running()
    await control.cancel()
    await control.settle()
    assert not control.turn_running()


async def test_answer_resolves_only_the_pending_request(lanes: Lanes) -> None:
    write = EchoTool("write", approval=True)
    provider = ScriptedProvider([CallTool("write", {"text": "x"}), Reply("written")])
    settings = make_settings().model_copy(update={"autonomy_level": Autonomy.SUPERVISED})
    lane = await lanes.lane(provider, write, settings=settings)
    control: LaneControl = lane
    assert control.pending_approval() is None
    assert not control.answer("nothing-pending", "yes")
    handle = await lane.submit("please write")
    request = await first_of(handle, ApprovalRequested)
    pending = control.pending_approval()
    assert pending is not None and pending.request_id == request.request_id
    assert not control.answer("another-request", "yes")
    assert control.answer(request.request_id, "yes")
    assert await handle.text() == "written"
    assert write.calls == [{"text": "x"}]
    assert control.pending_approval() is None


async def test_settle_returns_once_nothing_runs_or_waits(lanes: Lanes) -> None:
    slow = EchoTool("slow", delay=0.05)
    provider = ScriptedProvider([CallTool("slow", {"text": "1"}), Reply("one"), Reply("two")])
    lane = await lanes.lane(provider, slow, settings=make_settings())
    control: LaneControl = lane
    first = await lane.submit("m1")
    second = await lane.submit("m2")
    await control.settle()
    assert control.info().queued == 0 and not control.turn_running()
    assert [await first.text(), await second.text()] == ["one", "two"]


async def test_reset_view_starts_afresh_and_keeps_history(lanes: Lanes) -> None:
    lane = await lanes.lane(ScriptedProvider([Reply("hi")]))
    control: LaneControl = lane
    assert await (await lane.submit("hello")).text() == "hi"
    assert len((await control.view.get()).messages) == 2
    await control.reset_view("a test")
    assert (await control.view.get()).messages == []
    history = await lane.rt.store.messages(lane.id)
    assert [m.message.text for m in history if m.message is not None] == ["hello", "hi"]
    assert history[-1].kind == "reset" and history[-1].data == {"reason": "a test"}


async def test_info_describes_the_session_and_its_queue(lanes: Lanes) -> None:
    lane = await lanes.lane(ScriptedProvider([Hang()]))
    control: LaneControl = lane
    idle = control.info()
    assert (idle.session_id, idle.agent_id, idle.state, idle.queued) == (
        lane.id,
        "default",
        "idle",
        0,
    )
    running = await lane.submit("hang")
    await first_of(running, Accepted)
    waiting = await lane.submit("next")
    assert (await first_of(waiting, Queued)).position == 1
    busy = control.info()
    assert busy.state != "idle" and busy.queued == 1
    assert busy.subscribers >= 2, "two unfinished turn handles"
    await control.cancel()


async def test_session_ref_names_the_conversation(lanes: Lanes) -> None:
    lane = await lanes.lane(ScriptedProvider([Reply("x")]))
    control: LaneControl = lane
    ref = control.session_ref()
    assert (ref.session_id, ref.agent_id, ref.user_id, ref.channel) == (
        lane.id,
        "default",
        "local:ann",
        "tui",
    )
    assert control.id == lane.id and control.agent_id == "default"


# ---------------------------------------------------------------- commands on the protocol


@dataclass
class RecordingControl:
    """A :class:`LaneControl` that records what a command asked of it."""

    rt: Runtime
    view: ViewCache
    running: bool = False
    queued: int = 0
    pending: AwaitingApproval | None = None
    calls: list[tuple[Any, ...]] = field(default_factory=list[tuple[Any, ...]])
    id: str = "s1"
    agent_id: str = "default"
    allowlist: Iterable[str] = ()

    def session_ref(self) -> SessionRef:
        return SessionRef(session_id=self.id, agent_id=self.agent_id, user_id="local:ann")

    def deps(self) -> LoopDeps:
        raise AssertionError("these commands build no request")

    def info(self) -> SessionInfo:
        return SessionInfo(self.id, self.agent_id, "local:ann", "tui", "idle", self.queued, 0.0)

    def turn_running(self) -> bool:
        return self.running

    def pending_approval(self) -> AwaitingApproval | None:
        return self.pending

    def answer(self, request_id: str, decision: Decision) -> bool:
        self.calls.append(("answer", request_id, decision))
        return True

    async def cancel(self, reason: str = "Cancelled by user") -> int:
        self.calls.append(("cancel", reason))
        return self.queued

    async def settle(self) -> None:
        self.calls.append(("settle",))

    async def reset_view(self, reason: str) -> None:
        self.calls.append(("reset_view", reason))


@pytest.fixture
async def recording(db_url: str) -> AsyncIterator[RecordingControl]:
    db = Database(db_url)
    await db.migrate()
    rt = runtime(db, make_settings(), tools=None, provider=ScriptedProvider([Reply("x")]))
    yield RecordingControl(rt, ViewCache(rt.store, "s1", new=True))
    await db.dispose()


async def test_stop_cancels_with_the_users_reason_and_counts(recording: RecordingControl) -> None:
    recording.running, recording.queued = True, 3
    text = await run_command(recording, "/stop")
    assert text == "Stopped the current turn. Cleared 3 queued messages."
    assert recording.calls == [("cancel", "Cancelled by user")]


@pytest.mark.parametrize(
    ("command", "reply"), [("/new", "Started a fresh session."), ("/reset", "Session reset.")]
)
async def test_new_and_reset_cancel_settle_then_reset_the_view(
    recording: RecordingControl, command: str, reply: str
) -> None:
    assert await run_command(recording, command) == reply
    assert recording.calls == [
        ("cancel", f"Cancelled by {command}"),
        ("settle",),
        ("reset_view", command),
    ]


async def test_approval_commands_with_nothing_pending_answer_nothing(
    recording: RecordingControl,
) -> None:
    assert await run_command(recording, "/yes") == "No approval is pending."
    assert recording.calls == []


async def test_status_reads_info_and_grants(recording: RecordingControl) -> None:
    recording.queued, recording.allowlist = 2, ("write",)
    text = await run_command(recording, "/status")
    assert "Queued messages: 2" in text and "Always-approved tools: write" in text
    assert recording.calls == [], "reading the status changes nothing"
