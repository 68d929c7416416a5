"""The Telegram channel's persisted state on SQLite and PostgreSQL: the update log, the
outbox and pairing codes (migrated by the gateway's Alembic revisions)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from beamclaw_gateway.telegram.errors import NotApprovedError, UnknownPairingCodeError
from beamclaw_gateway.telegram.pairing import ALPHABET, MAX_PENDING, TTL_SECONDS, PairingStore
from beamclaw_gateway.telegram.store import Outbox, UpdateLog
from beamclaw_memory import Database


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tg.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def db(db_url: str) -> AsyncGenerator[Database]:
    database = Database(db_url)
    await database.migrate()
    try:
        yield database
    finally:
        await database.dispose()


async def test_updates_are_claimed_once_and_taken_up_until_done(db: Database) -> None:
    clock = Clock()
    log = UpdateLog(db, clock)
    assert await log.next_offset() is None
    assert await log.claim(7, {"update_id": 7}, -100123, 5)
    assert not await log.claim(7, {"update_id": 7}, -100123, 5), "a redelivery"
    assert await log.claim(8, {"update_id": 8}, 42, 6)
    assert await log.next_offset() == 9
    await log.mark(7, "handed", "session-1")
    assert [(u.update_id, u.state, u.session_id) for u in await log.unfinished()] == [
        (7, "handed", "session-1"),
        (8, "received", None),
    ]
    outbox = Outbox(db, clock)
    item = await outbox.put("reply:42:6", 42, "answer", reply_to=6, drafts=(99,))
    assert item is not None and item.message_ids == (99,) and item.sent_chunks == 0
    assert await outbox.put("reply:42:6", 42, "answer again", reply_to=6) is None
    assert [u.update_id for u in await log.unfinished()] == [7], "the reply marked 8 done"
    await outbox.progress(item.id, 1, (99, 100))
    assert [(p.sent_chunks, p.message_ids) for p in await outbox.pending()] == [(1, (99, 100))]
    await outbox.finish(item.id, "sent", None)
    assert await outbox.pending() == []
    await log.mark(7, "done")
    clock.now += 8 * 86_400
    assert await log.prune() == 1, "the newest update stays for the offset"
    assert await log.next_offset() == 9


async def test_pairing_codes_and_approvals(db: Database) -> None:
    clock = Clock()
    store = PairingStore(db, clock)
    await store.load()
    first = await store.request(1, 1, "ann", "Ann")
    assert first is not None and len(first.code) == 8 and set(first.code) <= set(ALPHABET)
    again = await store.request(1, 1, "ann", "Ann")
    assert again is not None and again.code == first.code
    for user in range(2, MAX_PENDING + 1):
        assert await store.request(user, user, None, None) is not None
    assert await store.request(99, 99, None, None) is None, "too many pending"
    request, user = await store.approve(first.code.lower(), "ann", "ops")
    assert request.user_id == 1 and user.person == "ann" and user.agent == "ops"
    assert store.approved(1) is not None
    with pytest.raises(UnknownPairingCodeError):
        await store.approve(first.code, None, None)
    reloaded = PairingStore(db, clock)
    await reloaded.load()
    assert reloaded.approved(1) is not None, "approvals survive a restart"
    clock.now += TTL_SECONDS + 1
    assert await store.pending() == []
    fresh = await store.request(99, 99, None, None)
    assert fresh is not None, "expired codes free their places"
    assert await store.revoke("@ANN") == "approved" and store.approved(1) is None
    assert await store.revoke(fresh.code) == "pending"
    with pytest.raises(NotApprovedError):
        await store.revoke("12345")


async def test_updates_record_their_node_and_a_gone_nodes_are_adopted(db: Database) -> None:
    clock = Clock()
    n1, n2, alone = UpdateLog(db, clock, "n1"), UpdateLog(db, clock, "n2"), UpdateLog(db, clock)
    assert await n1.claim(1, {"update_id": 1}, 42, 1)
    assert await n2.claim(2, {"update_id": 2}, 42, 2)
    assert await alone.claim(3, {"update_id": 3}, 42, 3)
    assert await n1.claim(4, {"update_id": 4}, 42, 4)
    await n1.mark(4, "done")
    assert await n1.handlers() == {"n1", "n2", None}
    assert [u.update_id for u in await n1.unfinished(mine=True)] == [1]
    assert [u.update_id for u in await alone.unfinished(mine=True)] == [3]
    assert [u.update_id for u in await n1.unfinished()] == [1, 2, 3]
    adopted = await n2.adopt("n1")
    assert [(u.update_id, u.state) for u in adopted] == [(1, "received")]
    assert [u.update_id for u in await n2.adopt(None)] == [3]
    assert await n1.handlers() == {"n2"}
    assert [u.update_id for u in await n2.unfinished(mine=True)] == [1, 2, 3]
    assert await n2.adopt("n1") == []
