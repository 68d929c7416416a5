"""The outbox sender against the fake Bot API: drafts edited into the answer, a deleted
draft replaced, a message Telegram keeps refusing given up after a day, never sent twice."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_gateway.telegram.api import BotApi
from beamclaw_gateway.telegram.outbound import (
    CLUSTER_SETTLE_SECONDS,
    GIVE_UP_SECONDS,
    OWN_RETRY_FIRST_SECONDS,
    OutboxSender,
)
from beamclaw_gateway.telegram.render import Chunk
from beamclaw_gateway.telegram.send import TextSender
from beamclaw_gateway.telegram.status import ChannelStatus
from beamclaw_gateway.telegram.store import Outbox
from beamclaw_memory import Database


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def db(tmp_path: Path) -> AsyncGenerator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'tg.db'}")
    await database.migrate()
    try:
        yield database
    finally:
        await database.dispose()


async def test_drafts_become_the_answer_and_a_deleted_one_is_replaced(db: Database) -> None:
    clock = Clock()
    async with FakeBotApi() as tg:
        tg.add_chat(70)
        api = BotApi(tg.token, tg.base_url)
        try:
            sender = TextSender(api)
            draft = await sender.send(70, Chunk("draft…", "draft…"))
            outbox = Outbox(db, clock)
            out = OutboxSender(outbox, sender, ChannelStatus("long_poll"), clock)
            item = await outbox.put("reply:70:1", 70, "**final**", drafts=(draft,))
            assert item is not None
            assert await out.flush(item) == (draft,)
            assert tg.messages(70)[0].plain_text == "final"
            assert await out.flush(item) == (draft,), "sent once: a second flush sends nothing"
            assert len(tg.calls_of("editMessageText")) == 1
            gone = await outbox.put("reply:70:2", 70, "after a deletion", drafts=(9999,))
            assert gone is not None
            (new_id,) = await out.flush(gone)
            assert new_id != 9999 and tg.messages(70)[-1].plain_text == "after a deletion"
        finally:
            await api.close()


async def test_a_message_refused_for_a_day_is_given_up(db: Database) -> None:
    clock = Clock()
    async with FakeBotApi() as tg:
        tg.add_chat(71)
        tg.block(71)
        api = BotApi(tg.token, tg.base_url)
        try:
            outbox = Outbox(db, clock)
            out = OutboxSender(outbox, TextSender(api), ChannelStatus("long_poll"), clock)
            item = await outbox.put("out:1", 71, "hello")
            assert item is not None
            assert await out.flush(item) == ()
            assert [p.id for p in await outbox.pending()] == [item.id], "kept for a retry"
            clock.now += GIVE_UP_SECONDS + 1
            assert await out.flush(item) == ()
            assert await outbox.pending() == []
        finally:
            await api.close()


async def test_in_cluster_mode_a_failed_live_send_is_retried_soon_by_its_node(
    db: Database,
) -> None:
    clock = Clock()
    async with FakeBotApi() as tg:
        tg.add_chat(72)
        api = BotApi(tg.token, tg.base_url, attempts=1)
        out: OutboxSender | None = None
        retrying: asyncio.Task[None] | None = None
        try:
            outbox = Outbox(db, clock)
            out = OutboxSender(
                outbox,
                TextSender(api),
                ChannelStatus("webhook"),
                clock,
                settle_seconds=CLUSTER_SETTLE_SECONDS,
            )
            retrying = asyncio.ensure_future(out.retry_own())
            tg.fail_next("sendMessage", 500, times=2)
            item = await outbox.put("reply:72:1", 72, "sent at last")
            assert item is not None
            assert await out.flush(item) == (), "the live send failed"
            assert [p.id for p in await outbox.pending()] == [item.id]
            for _ in range(60):  # 0.5 s, fails again, then 1 s later: well before 30 s
                if not await outbox.pending():
                    break
                await asyncio.sleep(0.1)
            assert await outbox.pending() == []
            assert [m.plain_text for m in tg.messages(72)] == ["sent at last"]
            old = await outbox.put("reply:72:2", 72, "the sweep's")
            assert old is not None
            tg.fail_next("sendMessage", 500)
            clock.now += CLUSTER_SETTLE_SECONDS / 2  # as old as half the settle time
            assert await out.flush(old) == ()
            await asyncio.sleep(OWN_RETRY_FIRST_SECONDS * 3)
            assert [p.id for p in await outbox.pending()] == [old.id], "left to the sweep"
        finally:
            if retrying is not None:
                retrying.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await retrying
            await api.close()
