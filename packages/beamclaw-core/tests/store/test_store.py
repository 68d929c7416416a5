"""The conversation store on real (migrated) SQLite and PostgreSQL databases."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import sqlalchemy as sa

from beamclaw_core.loop.states import AwaitingLlm, Idle, Turn
from beamclaw_core.messages import Message, Usage
from beamclaw_core.store import (
    RESET,
    SUMMARY,
    ConversationStore,
    StaleOwnerError,
    derive_session_id,
)
from beamclaw_core.store.tables import metadata
from beamclaw_core.testing import png_image
from beamclaw_memory import Database, Unit
from beamclaw_tools import TextPart, ToolCall


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[ConversationStore]:
    db = Database(database_url)
    await db.migrate()
    yield ConversationStore(db)
    await db.dispose()


async def test_ensure_creates_once_and_says_so(store: ConversationStore) -> None:
    first = await store.ensure("c", agent_id="a", user_id="u", channel="api", now=1.0)
    again = await store.ensure("c", agent_id="other", user_id="x", channel=None, now=2.0)
    assert first.new and not again.new
    assert (again.agent_id, again.user_id, again.channel, again.created_at) == (
        "a",
        "u",
        "api",
        1.0,
    )
    assert again.state == Idle()
    # concurrent first sends of one session: exactly one creates it
    raced = await asyncio.gather(
        *(store.ensure("r", agent_id="a", user_id="u", channel=None, now=3.0) for _ in range(8))
    )
    assert sum(r.new for r in raced) == 1


async def test_a_stale_next_seq_is_redone_from_the_database(store: ConversationStore) -> None:
    # another process (a second store on the same database) appends to the conversation
    other = ConversationStore(store.db)
    assert (await store.ensure("c", agent_id="a", user_id="u", channel=None, now=1.0)).new
    await other.commit("c", Idle(), [Message.user("first")], now=1.5)
    before = store.db.committed_writes
    # this store's hint (no messages yet) is stale: the unique key refuses it, and the
    # transaction is redone once with the sequence number read from the database
    assert await store.commit("c", Idle(), [Message.user("second")], now=2.0) == [2]
    assert store.db.committed_writes == before + 1
    assert [m.message.text for m in await store.messages("c") if m.message] == ["first", "second"]


async def test_migration_matches_table_definitions(store: ConversationStore) -> None:
    def columns(unit: Unit) -> dict[str, set[str]]:
        inspector = sa.inspect(unit.connection)
        return {t: {c["name"] for c in inspector.get_columns(t)} for t in metadata.tables}

    found = await store.db.read(columns)
    for name, table in metadata.tables.items():
        assert found[name] == {c.name for c in table.columns}


async def test_commit_appends_and_restores_state(store: ConversationStore) -> None:
    await store.ensure("c", agent_id="a", user_id="u", channel="tui", now=1.0)
    state = AwaitingLlm(turn=Turn(turn_id="t", started_at=1.0))
    seqs = await store.commit("c", state, [Message.user("hi"), Message.assistant("yo")], now=2.0)
    assert seqs == [1, 2]
    seqs = await store.commit(
        "c", Idle(), [Message.assistant("more", usage=Usage(total_tokens=3, cost_usd=0.5))], now=3.0
    )
    assert seqs == [3]
    record = await store.get("c")
    assert record is not None
    assert record.state == Idle()
    rows = await store.messages("c")
    assert [r.message.text for r in rows if r.message] == ["hi", "yo", "more"]
    assert await store.cost_since("a", 0.0) == 0.5
    assert await store.busy() == []


async def test_messages_with_images_read_back_as_they_were_written(
    store: ConversationStore,
) -> None:
    """A person's image and a tool's image are stored with their messages; rows written
    before parts kept their ``type`` tag read back by their fields."""
    await store.ensure("c", agent_id="a", user_id="u", channel="tui", now=1.0)
    call = ToolCall(id="c1", name="shot")
    written = [
        Message.user((TextPart(text="see"), png_image())),
        Message.assistant("", (call,)),
        Message.tool("c1", "shot", (TextPart(text="done"), png_image(40))),
    ]
    await store.commit("c", Idle(), written, now=2.0)
    assert (await store.view("c")).messages == written
    untagged = {"role": "user", "content": [{"text": "old"}, png_image().model_dump()]}
    del untagged["content"][1]["type"]
    assert Message.model_validate(untagged).content == (TextPart(text="old"), png_image())


async def test_view_follows_summary_and_reset_markers(store: ConversationStore) -> None:
    await store.ensure("c", agent_id="a", user_id="u", channel=None, now=1.0)
    call = ToolCall(id="x", name="t")
    await store.commit(
        "c",
        Idle(),
        [
            Message.user("1"),
            Message.assistant("", tool_calls=(call,)),
            Message.tool("x", "t", "r"),
            Message.user("2"),
        ],
        now=1.0,
    )
    await store.append_marker("c", SUMMARY, {"summary": "S", "first_kept_seq": 4}, now=2.0)
    view = await store.view("c")
    assert view.summary == "S"
    assert [m.text for m in view.messages] == ["2"]
    await store.append_marker("c", RESET, {}, now=3.0)
    await store.commit("c", Idle(), [Message.user("3")], now=4.0)
    view = await store.view("c")
    assert view.summary is None
    assert [m.text for m in view.messages] == ["3"]
    assert len(await store.messages("c")) == 7  # raw history keeps everything


async def test_the_last_reset_is_read_once_while_the_conversation_is_in_memory(
    store: ConversationStore,
) -> None:
    # another process (a second store on the same database) resets the conversation;
    # this store answers from what it wrote or read until its lane leaves memory
    other = ConversationStore(store.db)
    assert (await store.ensure("c", agent_id="a", user_id="u", channel=None, now=1.0)).new
    first = await other.append_marker("c", RESET, {}, now=2.0)
    assert await store.last_reset("c") is None, "a new conversation's is known: no read"
    store.forget("c")
    assert await store.last_reset("c") == first
    second = await other.append_marker("c", RESET, {}, now=3.0)
    assert await store.last_reset("c") == first, "read once, not again"
    mine = await store.append_marker("c", RESET, {}, now=4.0)
    assert mine > second and await store.last_reset("c") == mine, "its own reset, at once"
    # a reset whose append failed leaves it unknown: the next ask reads the database
    other.fences.hold("c", 7)
    await other.commit("c", Idle(), [Message.user("elsewhere")], now=5.0)
    newest = await other.append_marker("c", RESET, {}, now=6.0)
    with pytest.raises(StaleOwnerError):
        await store.append_marker("c", RESET, {}, now=7.0)
    assert await store.last_reset("c") == newest
    await store.delete("c")
    assert await store.last_reset("c") is None, "deleted: read again, and gone"


class LateReads(Database):
    """A database whose reads, while ``gate`` is set, hand their answer back only once
    it opens (a read a write overtakes, as on a remote server)."""

    gate: asyncio.Event | None = None

    def read(self, work: Any) -> Any:
        inner, gate = super().read(work), self.gate

        async def late() -> Any:
            result = await inner
            if gate is not None:
                await gate.wait()
            return result

        return late()


async def test_a_last_reset_read_overtaken_by_a_reset_is_not_kept(database_url: str) -> None:
    db = LateReads(database_url)
    await db.migrate()
    store = ConversationStore(db)
    await store.ensure("c", agent_id="a", user_id="u", channel=None, now=1.0)
    store.forget("c")
    gate = db.gate = asyncio.Event()
    read = asyncio.create_task(store.last_reset("c"))
    await asyncio.sleep(0.05)  # its answer (no reset yet) is in hand, held back
    db.gate = None
    reset = await store.append_marker("c", RESET, {}, now=2.0)
    assert await store.last_reset("c") == reset
    gate.set()
    assert await read is None, "the read's own answer, from before the reset"
    assert await store.last_reset("c") == reset, "not overwritten by the late answer"
    await db.dispose()


async def test_pending_runs_and_delete_inactive(store: ConversationStore) -> None:
    await store.ensure("c", agent_id="a", user_id="u", channel=None, now=1.0)
    await store.ensure("child", agent_id="a", user_id="u", channel=None, now=1.0, parent_id="c")
    assert await store.enqueue("c", "r1", {"text": "a"}, now=1.0) == 1
    assert await store.enqueue("c", "r2", {"text": "b"}, now=1.0) == 2
    await store.commit("c", Idle(), [Message.user("a")], now=1.5, consumed_runs=["r1"])
    assert [r.id for r in await store.pending("c")] == ["r2"]
    assert [c.id for c in await store.list()] == ["c"]
    assert await store.delete_inactive(before=100.0) == ["c"]
    assert await store.get("child") is None
    assert await store.pending() == []


async def test_delete_inactive_spares_what_is_kept_recent_or_busy(
    store: ConversationStore,
) -> None:
    for cid in ("old", "kept", "recent"):
        await store.ensure(cid, agent_id="a", user_id="u", channel=None, now=1.0)
    await store.touch("recent", 200.0)
    await store.commit("old", Idle(), [Message.user("bye")], now=2.0)
    assert await store.delete_inactive(before=100.0, keep=["kept"]) == ["old"]
    assert [c.id for c in await store.list()] == ["recent", "kept"]
    store.forget("kept")  # a dropped seq hint: the next append reads it back
    await store.commit("kept", Idle(), [Message.user("still here")], now=300.0)
    assert [m.message.text for m in await store.messages("kept") if m.message] == ["still here"]


def test_session_ids_follow_the_seed() -> None:
    import hashlib

    expected = "session-" + hashlib.sha256(b"tg:1:default").hexdigest()[:32]
    assert derive_session_id("tg:1", "default", "telegram") == expected
    assert derive_session_id("tg:1", "default", "telegram", "per_channel") != expected
    assert derive_session_id("tg:1", "default", "tui", "per_channel") != derive_session_id(
        "tg:1", "default", "telegram", "per_channel"
    )


async def test_a_history_page_reads_the_page_and_counts_without_markers(
    store: ConversationStore,
) -> None:
    await store.ensure("p", agent_id="a", user_id="u", channel=None, now=1.0)
    await store.commit("p", Idle(), [Message.user(f"m{i}") for i in range(1, 4)], now=1.1)
    reset_seq = await store.append_marker("p", RESET, {"reason": "test"}, now=1.2)
    await store.commit("p", Idle(), [Message.user(f"m{i}") for i in range(4, 7)], now=1.3)

    def texts(rows: list[Any]) -> list[str]:
        return [r.message.text for r in rows]

    rows, older, total = await store.message_page("p", limit=2)
    assert (texts(rows), older, total) == (["m5", "m6"], 6, 6)
    rows, older, total = await store.message_page("p", limit=2, before_seq=rows[0].seq)
    assert (texts(rows), older, total) == (["m3", "m4"], 4, 6)
    assert reset_seq not in [r.seq for r in rows], "markers are not messages"
    rows, older, _ = await store.message_page("p", limit=10, before_seq=rows[0].seq)
    assert (texts(rows), older) == (["m1", "m2"], 2)
    everything, _, _ = await store.message_page("p", limit=None)
    assert texts(everything) == [f"m{i}" for i in range(1, 7)]
    assert (await store.message_page("p", limit=0))[0] == []
    assert await store.message_page("nobody", limit=5) == ([], 0, 0)
