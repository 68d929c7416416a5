"""The Redis cluster link on a real Redis: leases with fencing epochs, commands, events."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Collection

import pytest
import redis.asyncio as aioredis

from beamclaw_core.cluster import Command
from beamclaw_core.loop import TextChunk, TurnDone, TurnEvent
from beamclaw_gateway.cluster_link import RedisLink

pytestmark = pytest.mark.redis


class Inbox:
    """A node's side of the link: what it watches, what it heard."""

    def __init__(self, watch: Collection[str] = ()) -> None:
        self.watch = set(watch)
        self.events: list[TurnEvent] = []
        self.commands: list[Command] = []
        self.heard = asyncio.Event()

    def watched(self) -> Collection[str]:
        return self.watch

    def on_event(self, event: TurnEvent) -> None:
        self.events.append(event)
        self.heard.set()

    async def on_command(self, command: Command) -> None:
        self.commands.append(command)
        self.heard.set()


STORED = {"s": 0}
"""The epochs "the store" accepted per name (the links' ``floor``)."""


async def _floor(name: str) -> int:
    return STORED.get(name, 0)


@pytest.fixture
async def links(redis_url: str) -> AsyncIterator[tuple[RedisLink, RedisLink]]:
    prefix = f"bc-test-{uuid.uuid4().hex[:8]}"
    a = RedisLink(redis_url, node_id="a", lease_seconds=0.6, floor=_floor, prefix=prefix)
    b = RedisLink(redis_url, node_id="b", lease_seconds=0.6, floor=_floor, prefix=prefix)
    yield a, b
    await a.close()
    await b.close()


async def test_one_holder_at_a_time_and_every_grant_a_newer_epoch(
    links: tuple[RedisLink, RedisLink],
) -> None:
    a, b = links
    first = await a.acquire("s")
    assert first is not None
    assert await b.acquire("s") is None  # held
    assert await a.renew("s", first)
    assert not await b.renew("s", first)  # only the holder's exact value renews
    await b.release("s", first)  # not b's: nothing happens
    assert await a.holder("s") == f"a:{first}"
    await a.release("s", first)
    second = await b.acquire("s")
    assert second == first + 1
    assert second is not None
    # b stops renewing (paused, killed): the lease lapses and a takes it over
    await asyncio.sleep(0.8)
    assert not await b.renew("s", second)
    third = await a.acquire("s")
    assert third == second + 1


async def test_a_lost_epoch_counter_is_seeded_above_what_the_store_accepted(
    links: tuple[RedisLink, RedisLink], redis_url: str
) -> None:
    a, b = links
    first = await a.acquire("flushed")
    assert first == 1  # nothing stored: the counter starts from 0
    await a.release("flushed", first)
    STORED["flushed"] = 7  # the store saw epoch 7 (e.g. before an earlier flush)
    redis = aioredis.Redis.from_url(redis_url)
    try:
        await redis.delete(a._key("epoch", "flushed"))  # pyright: ignore[reportPrivateUsage]
    finally:
        await redis.aclose()
    assert await b.acquire("flushed") == 8
    assert await a.acquire("flushed") is None  # still one holder at a time
    STORED["flushed"] = 0  # the counter exists again: the store is not asked
    await b.release("flushed", 8)
    assert await a.acquire("flushed") == 9


async def test_commands_reach_every_node_and_events_only_other_nodes(
    links: tuple[RedisLink, RedisLink],
) -> None:
    a, b = links
    heard_by_a, heard_by_b = Inbox(), Inbox(watch={"s"})
    serving = [
        asyncio.ensure_future(a.serve(heard_by_a)),
        asyncio.ensure_future(b.serve(heard_by_b)),
    ]
    try:
        await b.follow("s")
        await asyncio.sleep(0.3)  # both subscribed to the command channel
        await b.tell(Command("answer", "s", "r1", "yes"))
        async with asyncio.timeout(5):
            while not heard_by_a.commands or not heard_by_b.commands:
                await asyncio.sleep(0.02)
        assert heard_by_a.commands == heard_by_b.commands == [Command("answer", "s", "r1", "yes")]
        a.publish(TextChunk("s", "t1", text="hel"))
        a.publish(TurnDone("s", "t1", text="hello"))
        async with asyncio.timeout(5):
            while len(heard_by_b.events) < 2:
                await asyncio.sleep(0.02)
        assert [type(e) for e in heard_by_b.events] == [TextChunk, TurnDone]
        assert heard_by_b.events[1].to_dict()["text"] == "hello"
        assert heard_by_a.events == []  # a watches nothing, and never reads its own
    finally:
        for task in serving:
            task.cancel()
        await asyncio.gather(*serving, return_exceptions=True)
