"""The conversation store: conversations, append-only messages, pending runs.

Invariants:

* Messages are only ever INSERTed, one row per message, with ``seq`` increasing by one
  per conversation: appending costs the same at message 10 and 10,000, and no history is
  rewritten. Compaction and resets append *marker* rows that move the start of the LLM
  view; the raw messages stay.
* :meth:`ConversationStore.commit` writes a transition atomically: the new state, its
  messages and the consumed pending run in one transaction. A ``kill -9`` at any instant
  leaves either all of it or none of it.
* Every write transaction starts with a write statement, never a read: on SQLite a
  transaction that reads first and writes later fails when another connection commits
  in between, instead of waiting for the lock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from beamclaw_core.loop.states import Idle, State, state_from_json, state_to_json
from beamclaw_core.messages import Message
from beamclaw_core.store.tables import conversations, messages, pending_runs
from beamclaw_memory import Database

MESSAGE = "message"
SUMMARY = "summary"
RESET = "reset"
_QUIET_STATES = ("idle", "error")

_Row = tuple[str, Message | None, dict[str, Any] | None]
"""One row to append: (kind, message or None, marker data or None)."""


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    id: str
    agent_id: str
    user_id: str
    channel: str | None
    parent_id: str | None
    state: State
    last_activity_at: float
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One ``messages`` row: a message, or a marker (``summary``/``reset``) with ``data``."""

    seq: int
    kind: str
    message: Message | None
    data: dict[str, Any]
    created_at: float


@dataclass(frozen=True, slots=True)
class PendingRunRecord:
    id: str
    conversation_id: str
    position: int
    payload: dict[str, Any]
    created_at: float


@dataclass(frozen=True, slots=True)
class View:
    """What the LLM sees of a conversation: an optional summary, then raw messages."""

    summary: str | None
    messages: list[Message]
    first_seq: int
    """Sequence number of the first raw message in the view."""


async def _write_lock(conn: AsyncConnection) -> None:
    """Take the database's write lock before a transaction's first read.

    SQLite (WAL) fails a transaction that read, then tries to write after another
    connection committed ("database is locked", without waiting for busy_timeout). A
    write statement first — this one matches no row — makes the transaction a writer
    from the start, so it waits its turn instead. A no-op on PostgreSQL.
    """
    await conn.execute(conversations.update().where(sa.false()).values(updated_at=0.0))


def _record(row: sa.Row[Any]) -> ConversationRecord:
    m = row._mapping  # pyright: ignore[reportPrivateUsage]
    return ConversationRecord(
        id=m["id"],
        agent_id=m["agent_id"],
        user_id=m["user_id"],
        channel=m["channel"],
        parent_id=m["parent_id"],
        state=state_from_json(m["state_data"]),
        last_activity_at=m["last_activity_at"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
    )


class ConversationStore:
    """Conversation persistence over the shared :class:`~beamclaw_memory.Database`."""

    def __init__(self, database: Database) -> None:
        self.db = database
        self._last_seq: dict[str, int] = {}
        """Last committed ``seq`` per conversation: saves a ``SELECT max(seq)`` per append.

        Only a hint. It is updated after a transaction commits, dropped when a
        conversation is deleted, and a stale value (another process appended, or a
        commit whose outcome was lost to a cancellation) surfaces as a unique-key
        violation on ``(conversation_id, seq)``, after which the transaction is redone
        once with the value read from the database.
        """

    # ------------------------------------------------------------ conversations

    async def ensure(
        self,
        conversation_id: str,
        *,
        agent_id: str,
        user_id: str,
        channel: str | None,
        now: float,
        parent_id: str | None = None,
    ) -> ConversationRecord:
        """The conversation, created ``Idle`` if it does not exist yet."""
        existing = await self.get(conversation_id)
        if existing is not None:
            return existing
        idle = Idle()
        try:
            async with self.db.engine.begin() as conn:
                await conn.execute(
                    conversations.insert().values(
                        id=conversation_id,
                        agent_id=agent_id,
                        user_id=user_id,
                        channel=channel,
                        parent_id=parent_id,
                        state=idle.kind,
                        state_data=state_to_json(idle),
                        last_activity_at=now,
                        state_updated_at=now,
                        created_at=now,
                        updated_at=now,
                    )
                )
        except IntegrityError:
            raced = await self.get(conversation_id)
            if raced is None:
                raise
            return raced
        return ConversationRecord(
            conversation_id, agent_id, user_id, channel, parent_id, idle, now, now, now
        )

    async def get(self, conversation_id: str) -> ConversationRecord | None:
        async with self.db.engine.connect() as conn:
            row = (
                await conn.execute(
                    sa.select(conversations).where(conversations.c.id == conversation_id)
                )
            ).first()
        return None if row is None else _record(row)

    async def list(self, *, include_children: bool = False) -> list[ConversationRecord]:
        query = sa.select(conversations).order_by(conversations.c.last_activity_at.desc())
        if not include_children:
            query = query.where(conversations.c.parent_id.is_(None))
        async with self.db.engine.connect() as conn:
            return [_record(r) for r in (await conn.execute(query)).all()]

    async def busy(self) -> list[str]:
        """Conversations persisted mid-turn (neither idle nor error): to recover at start."""
        async with self.db.engine.connect() as conn:
            rows = await conn.execute(
                sa.select(conversations.c.id).where(conversations.c.state.not_in(_QUIET_STATES))
            )
            return [r[0] for r in rows]

    async def delete(self, conversation_id: str) -> bool:
        """Delete a conversation with its messages, runs and children. True if it existed."""
        async with self.db.engine.begin() as conn:
            await self._delete_tree(conn, [conversation_id])
            result = await conn.execute(
                conversations.delete().where(conversations.c.id == conversation_id)
            )
        return result.rowcount > 0

    async def _delete_tree(self, conn: AsyncConnection, ids: Sequence[str]) -> None:
        for conversation_id in ids:
            self._last_seq.pop(conversation_id, None)
        await conn.execute(messages.delete().where(messages.c.conversation_id.in_(ids)))
        await conn.execute(pending_runs.delete().where(pending_runs.c.conversation_id.in_(ids)))
        # Explicit children-first delete: cascades are not relied upon (SQLite may have
        # foreign keys off on connections created outside Database).
        children = [
            r[0]
            for r in await conn.execute(
                sa.select(conversations.c.id).where(conversations.c.parent_id.in_(ids))
            )
        ]
        if children:
            await self._delete_tree(conn, children)
            await conn.execute(conversations.delete().where(conversations.c.id.in_(children)))

    async def expire(self, before: float) -> list[str]:
        """TTL cleaner: delete idle top-level conversations inactive since before ``before``."""
        async with self.db.engine.begin() as conn:
            await _write_lock(conn)
            ids = [
                r[0]
                for r in await conn.execute(
                    sa.select(conversations.c.id).where(
                        conversations.c.last_activity_at < before,
                        conversations.c.state.in_(_QUIET_STATES),
                        conversations.c.parent_id.is_(None),
                    )
                )
            ]
            if ids:
                await self._delete_tree(conn, ids)
                await conn.execute(conversations.delete().where(conversations.c.id.in_(ids)))
        return ids

    # ------------------------------------------------------------ transitions and messages

    async def commit(
        self,
        conversation_id: str,
        state: State,
        new_messages: Sequence[Message],
        *,
        now: float,
        consumed_runs: Sequence[str] = (),
        activity: bool = False,
    ) -> list[int]:
        """Atomically: append ``new_messages``, store ``state``, drop ``consumed_runs``.

        One transaction of at most three statements (the message INSERT, the state
        UPDATE, the pending-run DELETE). Returns the sequence numbers given to the
        messages.
        """
        rows: list[_Row] = [(MESSAGE, m, None) for m in new_messages]
        values: dict[str, Any] = {
            "state": state.kind,
            "state_data": state_to_json(state),
            "state_updated_at": now,
            "updated_at": now,
        }
        if activity:
            values["last_activity_at"] = now

        async def write(conn: AsyncConnection) -> list[int]:
            # The UPDATE comes first so the transaction holds SQLite's write lock before
            # it reads max(seq) (a read-then-write transaction fails with "database is
            # locked" when another connection commits in between).
            await conn.execute(
                conversations.update().where(conversations.c.id == conversation_id).values(**values)
            )
            seqs = await self._append(conn, conversation_id, rows, now)
            if consumed_runs:
                await conn.execute(
                    pending_runs.delete().where(pending_runs.c.id.in_(list(consumed_runs)))
                )
            return seqs

        return await self._transaction(conversation_id, write)

    async def _transaction(
        self, conversation_id: str, write: Callable[[AsyncConnection], Awaitable[list[int]]]
    ) -> list[int]:
        """Run ``write`` in one transaction; redo it once if the cached ``seq`` was stale."""
        for attempt in (1, 2):
            try:
                async with self.db.engine.begin() as conn:
                    seqs = await write(conn)
            except IntegrityError:
                if attempt == 2 or self._last_seq.pop(conversation_id, None) is None:
                    raise
                continue
            if seqs:
                self._last_seq[conversation_id] = seqs[-1]
            return seqs
        raise AssertionError("unreachable")

    async def append_marker(
        self, conversation_id: str, kind: str, data: dict[str, Any], *, now: float
    ) -> int:
        """Append a ``summary`` or ``reset`` marker row; returns its sequence number."""
        rows: list[_Row] = [(kind, None, data)]

        async def write(conn: AsyncConnection) -> list[int]:
            await conn.execute(  # write first: see commit()
                conversations.update()
                .where(conversations.c.id == conversation_id)
                .values(updated_at=now)
            )
            return await self._append(conn, conversation_id, rows, now)

        return (await self._transaction(conversation_id, write))[0]

    async def _append(
        self,
        conn: AsyncConnection,
        conversation_id: str,
        rows: Sequence[_Row],
        now: float,
    ) -> list[int]:
        if not rows:
            return []
        seq = self._last_seq.get(conversation_id)
        if seq is None:
            last = (
                await conn.execute(
                    sa.select(sa.func.max(messages.c.seq)).where(
                        messages.c.conversation_id == conversation_id
                    )
                )
            ).scalar()
            seq = int(last or 0)
        values: list[dict[str, Any]] = []
        for kind, message, data in rows:
            seq += 1
            if message is not None:
                usage = message.usage
                values.append(
                    {
                        "conversation_id": conversation_id,
                        "seq": seq,
                        "kind": kind,
                        "role": message.role.value,
                        "content": message.model_dump(mode="json", exclude_defaults=True),
                        "usage": None if usage is None else usage.model_dump(mode="json"),
                        "cost_usd": None if usage is None else usage.cost_usd,
                        "created_at": now,
                    }
                )
            else:
                values.append(
                    {
                        "conversation_id": conversation_id,
                        "seq": seq,
                        "kind": kind,
                        "role": None,
                        "content": data or {},
                        "usage": None,
                        "cost_usd": None,
                        "created_at": now,
                    }
                )
        await conn.execute(messages.insert(), values)
        return [v["seq"] for v in values]

    async def messages(self, conversation_id: str, *, after_seq: int = 0) -> list[StoredMessage]:
        """Every row after ``after_seq``, in order (raw history including markers)."""
        async with self.db.engine.connect() as conn:
            rows = await conn.execute(
                sa.select(
                    messages.c.seq, messages.c.kind, messages.c.content, messages.c.created_at
                )
                .where(messages.c.conversation_id == conversation_id, messages.c.seq > after_seq)
                .order_by(messages.c.seq)
            )
            out: list[StoredMessage] = []
            for seq, kind, content, created in rows:
                if kind == MESSAGE:
                    out.append(
                        StoredMessage(seq, kind, Message.model_validate(content), {}, created)
                    )
                else:
                    out.append(StoredMessage(seq, kind, None, dict(content), created))
            return out

    async def view(self, conversation_id: str) -> View:
        """The LLM view: after the last reset; from the last summary's first kept message."""
        async with self.db.engine.connect() as conn:
            marker = (
                await conn.execute(
                    sa.select(messages.c.seq, messages.c.kind, messages.c.content)
                    .where(
                        messages.c.conversation_id == conversation_id, messages.c.kind != MESSAGE
                    )
                    .order_by(messages.c.seq.desc())
                    .limit(1)
                )
            ).first()
        summary: str | None = None
        start = 0
        if marker is not None:
            seq, kind, content = marker
            if kind == RESET:
                start = seq
            else:
                summary = content.get("summary")
                start = int(content.get("first_kept_seq", seq + 1)) - 1
        rows = [
            r
            for r in await self.messages(conversation_id, after_seq=start)
            if r.message is not None
        ]
        return View(
            summary,
            [r.message for r in rows if r.message is not None],
            rows[0].seq if rows else start + 1,
        )

    async def view_rows(self, conversation_id: str) -> list[StoredMessage]:
        """The raw messages of the current view with their sequence numbers."""
        v = await self.view(conversation_id)
        return [
            r
            for r in await self.messages(conversation_id, after_seq=v.first_seq - 1)
            if r.message is not None
        ]

    async def cost_since(self, agent_id: str, since: float) -> float:
        """USD spent by ``agent_id``'s conversations (children included) since ``since``."""
        async with self.db.engine.connect() as conn:
            total = (
                await conn.execute(
                    sa.select(sa.func.coalesce(sa.func.sum(messages.c.cost_usd), 0.0))
                    .select_from(
                        messages.join(
                            conversations, messages.c.conversation_id == conversations.c.id
                        )
                    )
                    .where(conversations.c.agent_id == agent_id, messages.c.created_at >= since)
                )
            ).scalar()
        return float(total or 0.0)

    async def touch(self, conversation_id: str, now: float) -> None:
        async with self.db.engine.begin() as conn:
            await conn.execute(
                conversations.update()
                .where(conversations.c.id == conversation_id)
                .values(last_activity_at=now)
            )

    # ------------------------------------------------------------ pending runs

    async def enqueue(
        self, conversation_id: str, run_id: str, payload: dict[str, Any], *, now: float
    ) -> int:
        async with self.db.engine.begin() as conn:
            await _write_lock(conn)
            last = (
                await conn.execute(
                    sa.select(sa.func.max(pending_runs.c.position)).where(
                        pending_runs.c.conversation_id == conversation_id
                    )
                )
            ).scalar()
            position = int(last or 0) + 1
            await conn.execute(
                pending_runs.insert().values(
                    id=run_id,
                    conversation_id=conversation_id,
                    position=position,
                    payload=payload,
                    created_at=now,
                )
            )
        return position

    async def pending(self, conversation_id: str | None = None) -> list[PendingRunRecord]:
        query = sa.select(pending_runs).order_by(
            pending_runs.c.conversation_id, pending_runs.c.position
        )
        if conversation_id is not None:
            query = query.where(pending_runs.c.conversation_id == conversation_id)
        async with self.db.engine.connect() as conn:
            return [
                PendingRunRecord(r.id, r.conversation_id, r.position, dict(r.payload), r.created_at)
                for r in await conn.execute(query)
            ]

    async def drop_runs(self, run_ids: Sequence[str]) -> None:
        if not run_ids:
            return
        async with self.db.engine.begin() as conn:
            await conn.execute(pending_runs.delete().where(pending_runs.c.id.in_(list(run_ids))))
