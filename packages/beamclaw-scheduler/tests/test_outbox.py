"""The outbox of jobs' answers over a real core and database: an answer committed before
a crash is delivered after the restart (once, under the fire's delivery id), a refused
delivery is retried with backoff under the same id and given up after a bound, a turn
that committed nothing sends nothing."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

from beamclaw_core import Message
from beamclaw_core.conversation import Conversation, OnDone, OnEvent, Turn, TurnRequest
from beamclaw_core.sessions import TurnResult
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_scheduler import JobRequest, JobStore, Scheduler, SchedulerSettings
from beamclaw_scheduler.answers import committed_answer
from beamclaw_scheduler.outbox import MAX_ATTEMPTS, backoff, delivery_key, turn_ref
from beamclaw_scheduler.outbox_sender import ORPHAN_GRACE_SECONDS
from beamclaw_tools import ToolCall

from .conftest import T0

SETTINGS = SchedulerSettings(enabled=True, min_interval_seconds=1)


@dataclasses.dataclass
class DyingTurn:
    """A turn whose caller dies the moment its answer is committed (``committed`` set)."""

    inner: Turn
    committed: asyncio.Event

    @property
    def session_id(self) -> str:
        return self.inner.session_id

    @property
    def turn_id(self) -> str:
        return self.inner.turn_id

    def events(self) -> AsyncIterator[Any]:
        return self.inner.events()

    async def result(self) -> TurnResult:
        await self.inner.result()
        self.committed.set()
        await asyncio.Event().wait()  # the process is gone: nothing after the commit runs
        raise AssertionError("unreachable")


class DyingConversation:
    """The scheduler's conversation port whose turns are :class:`DyingTurn`."""

    def __init__(self, inner: Conversation) -> None:
        self.inner = inner
        self.committed = asyncio.Event()

    async def send(
        self,
        request: TurnRequest,
        *,
        on_event: OnEvent | None = None,
        on_done: OnDone | None = None,
    ) -> Turn:
        turn = await self.inner.send(request, on_event=on_event, on_done=on_done)
        return DyingTurn(turn, self.committed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_an_answer_committed_before_a_crash_is_delivered_after_the_restart(
    world_factory: Callable[..., Any],
) -> None:
    provider = ScriptedProvider([Reply("time to stretch")], repeat_last=True)
    world = await world_factory(provider)
    dying = DyingConversation(world.ports.conversation)
    ports = dataclasses.replace(world.ports, conversation=dying)  # type: ignore[arg-type]
    before = Scheduler(SETTINGS, JobStore(world.db, world.clock), ports)
    job = await before.create(JobRequest(prompt="stretch", every_seconds=60, deliver_to="rec:me"))
    world.clock.now = T0 + 60
    await before.tick()
    await asyncio.wait_for(dying.committed.wait(), 10)
    await before.stop()  # the crash: the fire never gets past its turn's commit
    assert world.channel.sent == []

    restarted = world.scheduler()
    await restarted.deliveries.sweep()
    assert world.channel.sent == [], "a young row may be another node's live fire"
    world.clock.now += ORPHAN_GRACE_SECONDS
    await restarted.deliveries.sweep()
    await restarted.deliveries.sweep()
    key = delivery_key(job.id, 1)
    assert world.channel.sent == ["time to stretch"]
    assert world.channel.ids == [key]
    assert len(provider.calls) == 1, "the turn is not run again"
    row = await restarted.deliveries.outbox.get(key)
    assert row is not None and row.state == "sent"


async def test_a_refused_delivery_is_retried_with_backoff_under_one_id(
    world_factory: Callable[..., Any],
) -> None:
    world = await world_factory(ScriptedProvider([Reply("hello")], repeat_last=True))
    scheduler = world.scheduler()
    job = await scheduler.create(JobRequest(prompt="p", every_seconds=60, deliver_to="rec:me"))
    world.channel.refusing = 2
    world.clock.now = T0 + 60
    await scheduler.tick()
    await scheduler.settle()
    stored = await scheduler.get(job.id)
    assert stored.error_count == 1 and "rec is down" in (stored.last_error or "")
    world.clock.now += backoff(1) - 1
    await scheduler.deliveries.sweep()
    assert len(world.channel.ids) == 1, "not before its backoff"
    world.clock.now += 1
    await scheduler.deliveries.sweep()
    assert len(world.channel.ids) == 2 and world.channel.sent == []
    world.clock.now += backoff(2)
    await scheduler.deliveries.sweep()
    await scheduler.deliveries.sweep()
    assert world.channel.sent == ["hello"]
    assert world.channel.ids == [delivery_key(job.id, 1)] * 3


async def test_a_delivery_is_given_up_after_a_bound(world_factory: Callable[..., Any]) -> None:
    world = await world_factory(ScriptedProvider([Reply("hello")], repeat_last=True))
    scheduler = world.scheduler()
    job = await scheduler.create(JobRequest(prompt="p", every_seconds=60, deliver_to="rec:me"))
    world.channel.refusing = 1_000
    world.clock.now = T0 + 60
    await scheduler.tick()
    await scheduler.settle()
    for _ in range(MAX_ATTEMPTS + 2):
        world.clock.now += 3_600
        await scheduler.deliveries.sweep()
    row = await scheduler.deliveries.outbox.get(delivery_key(job.id, 1))
    assert row is not None and row.state == "failed" and row.attempts == MAX_ATTEMPTS
    assert len(world.channel.ids) == MAX_ATTEMPTS and world.channel.sent == []
    assert scheduler.health().data["deliveries"]["failed"] == 1  # type: ignore[index]


async def test_a_fire_whose_turn_committed_nothing_sends_nothing(
    world_factory: Callable[..., Any],
) -> None:
    world = await world_factory(ScriptedProvider([Reply("x")], repeat_last=True))
    scheduler = world.scheduler()
    await scheduler.deliveries.outbox.expect(
        "gone:1", job_id="gone", deliver_to="rec:me", person="local:ann", session_id="nowhere"
    )
    world.clock.now += ORPHAN_GRACE_SECONDS
    await scheduler.deliveries.sweep()
    row = await scheduler.deliveries.outbox.get("gone:1")
    assert row is not None and row.state == "skipped" and world.channel.ids == []


def test_the_committed_answer_is_the_ended_turn_after_the_marked_message() -> None:
    ref = turn_ref("j:1")
    asked = Message.user("go", meta={"source_message_id": ref})
    calling = Message.assistant("looking", (ToolCall(id="c1", name="bash"),))
    result = Message.tool("c1", "bash", "ok")
    done = Message.assistant("found it")
    assert committed_answer([asked, calling], ref) is None, "still calling a tool"
    assert committed_answer([asked, calling, result, done], ref) == "looking\n\nfound it"
    assert committed_answer([asked, done, Message.user("next")], ref) == "found it"
    assert committed_answer([done, Message.user("other")], ref) is None
