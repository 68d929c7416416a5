"""Fencing tokens: a stale owner's writes are refused (two nodes = two stores)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa

from beamclaw_core.loop.states import Idle
from beamclaw_core.messages import Message
from beamclaw_core.store import RESET, ConversationStore, StaleOwnerError
from beamclaw_core.store.tables import conversations, messages
from beamclaw_memory import Database, Unit


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    await database.migrate()
    yield database
    await database.dispose()


async def _texts(store: ConversationStore, cid: str) -> list[str]:
    return [m.message.text for m in await store.messages(cid) if m.message is not None]


async def test_a_stale_owners_write_is_refused_and_leaves_nothing(db: Database) -> None:
    old, new = ConversationStore(db), ConversationStore(db)
    await old.ensure("c", agent_id="a", user_id="u", channel=None, now=1.0)
    old.fences.hold("c", 1)
    await old.commit("c", Idle(), [Message.user("one")], now=2.0)
    # the lease expired while the old owner was paused; the new one writes under epoch 2
    new.fences.hold("c", 2)
    await new.commit("c", Idle(), [Message.user("two")], now=3.0)
    with pytest.raises(StaleOwnerError) as refused:
        await old.commit("c", Idle(), [Message.user("stale")], now=4.0)
    assert (refused.value.epoch, refused.value.current) == (1, 2)
    with pytest.raises(StaleOwnerError):
        await old.append_marker("c", RESET, {"reason": "stale"}, now=4.0)
    assert await _texts(new, "c") == ["one", "two"]
    assert len(await new.messages("c")) == 2  # the refused marker was not written either

    def epochs(unit: Unit) -> tuple[int, list[int]]:
        owner = unit.execute(sa.select(conversations.c.owner_epoch)).scalar_one()
        rows = unit.execute(sa.select(messages.c.epoch).order_by(messages.c.seq)).scalars()
        return int(owner), [int(e) for e in rows]

    assert await db.read(epochs) == (2, [1, 2])


async def test_without_leases_everything_is_written_under_epoch_zero(db: Database) -> None:
    # a single node holds no epochs: writes carry 0 and never conflict with each other
    one, two = ConversationStore(db), ConversationStore(db)
    await one.ensure("c", agent_id="a", user_id="u", channel=None, now=1.0)
    await one.commit("c", Idle(), [Message.user("a")], now=2.0)
    await two.commit("c", Idle(), [Message.user("b")], now=3.0)
    assert await _texts(one, "c") == ["a", "b"]
    # a held epoch that was released again falls back to 0, which a newer owner refuses
    one.fences.hold("c", 3)
    await one.commit("c", Idle(), [Message.user("c")], now=4.0)
    one.fences.drop("c")
    with pytest.raises(StaleOwnerError):
        await one.commit("c", Idle(), [Message.user("d")], now=5.0)
