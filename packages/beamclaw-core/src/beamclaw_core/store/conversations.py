"""The conversation store: conversations, append-only messages, pending runs.

Invariants:

* Messages are only ever INSERTed, one row per message, with ``seq`` increasing by one
  per conversation: appending costs the same at message 10 and 10,000, and no history is
  rewritten. Compaction and resets append *marker* rows that move the start of the LLM
  view; the raw messages stay.
* :meth:`ConversationStore.commit` writes a transition atomically: the new state, its
  messages and the consumed pending run in one transaction. A ``kill -9`` at any instant
  leaves either all of it or none of it.
* Each public method is one unit of work (:meth:`~beamclaw_memory.Database.read` or
  ``write``): one transaction, one trip to the database thread. Write transactions hold
  SQLite's write lock from their first statement, so a read-then-write never fails
  half-way because another connection committed in between.
* The hot statements are built once, with bound parameters: building a statement and
  its cache key costs more than running it on SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from beamclaw_core.loop.states import Idle, State, state_from_json, state_to_json
from beamclaw_core.messages import Message
from beamclaw_core.store.tables import conversations, messages, pending_runs
from beamclaw_memory import Database, Prepared

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
    new: bool = False
    """True when the call that returned this record created the conversation."""


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


_GET = Prepared(sa.select(conversations).where(conversations.c.id == sa.bindparam("b_id")))
_MAX_SEQ = Prepared(
    sa.select(sa.func.max(messages.c.seq)).where(messages.c.conversation_id == sa.bindparam("b_id"))
)
_MAX_POSITION = Prepared(
    sa.select(sa.func.max(pending_runs.c.position)).where(
        pending_runs.c.conversation_id == sa.bindparam("b_id")
    )
)
_MESSAGE_COLUMNS = ("conversation_id", "seq", "kind", "role", "content", "usage", "cost_usd")
_INSERT_MESSAGES = Prepared(
    messages.insert().values(
        **{c: sa.bindparam(f"b_{c}") for c in _MESSAGE_COLUMNS}, created_at=sa.bindparam("b_now")
    )
)


@cache
def _create(dialect: str) -> Prepared:
    """INSERT of a new conversation that does nothing when its id exists."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return Prepared(
        insert(conversations)
        .values(
            id=sa.bindparam("b_id"),
            agent_id=sa.bindparam("b_agent"),
            user_id=sa.bindparam("b_user"),
            channel=sa.bindparam("b_channel"),
            parent_id=sa.bindparam("b_parent"),
            state=sa.bindparam("b_state"),
            state_data=sa.bindparam("b_state_data"),
            last_activity_at=sa.bindparam("b_now"),
            state_updated_at=sa.bindparam("b_now"),
            created_at=sa.bindparam("b_now"),
            updated_at=sa.bindparam("b_now"),
        )
        .on_conflict_do_nothing(index_elements=["id"])
    )


_INSERT_RUN = Prepared(
    pending_runs.insert().values(
        id=sa.bindparam("b_id"),
        conversation_id=sa.bindparam("b_conversation"),
        position=sa.bindparam("b_position"),
        payload=sa.bindparam("b_payload"),
        created_at=sa.bindparam("b_now"),
    )
)
_DROP_RUN = Prepared(pending_runs.delete().where(pending_runs.c.id == sa.bindparam("b_id")))
_LAST_MARKER = Prepared(
    sa.select(messages.c.seq, messages.c.kind, messages.c.content)
    .where(messages.c.conversation_id == sa.bindparam("b_id"), messages.c.kind != MESSAGE)
    .order_by(messages.c.seq.desc())
    .limit(1)
)
_ROWS_AFTER = Prepared(
    sa.select(messages.c.seq, messages.c.kind, messages.c.content, messages.c.created_at)
    .where(
        messages.c.conversation_id == sa.bindparam("b_id"),
        messages.c.seq > sa.bindparam("b_after"),
    )
    .order_by(messages.c.seq)
)
_STATE_VALUES = {
    "state": sa.bindparam("b_state"),
    "state_data": sa.bindparam("b_state_data"),
    "state_updated_at": sa.bindparam("b_now"),
    "updated_at": sa.bindparam("b_now"),
}
_SET_STATE = {
    activity: Prepared(
        conversations.update()
        .where(conversations.c.id == sa.bindparam("b_id"))
        .values(
            **_STATE_VALUES, **({"last_activity_at": sa.bindparam("b_now")} if activity else {})
        )
    )
    for activity in (False, True)
}
_TOUCH = Prepared(
    conversations.update()
    .where(conversations.c.id == sa.bindparam("b_id"))
    .values(updated_at=sa.bindparam("b_now"))
)
_CONVERSATION_COLUMNS = tuple(c.name for c in conversations.columns)


def _record(row: Sequence[Any]) -> ConversationRecord:
    """A ``conversations`` row (its columns in table order) as a record."""
    m = dict(zip(_CONVERSATION_COLUMNS, row, strict=True))
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
        """The conversation, created ``Idle`` (``new``) if it does not exist yet.

        One write transaction: insert unless present (then read what is there).
        """
        idle = Idle()
        stmt = _create(self.db.dialect)
        params = {
            "b_id": conversation_id,
            "b_agent": agent_id,
            "b_user": user_id,
            "b_channel": channel,
            "b_parent": parent_id,
            "b_state": idle.kind,
            "b_state_data": state_to_json(idle),
            "b_now": now,
        }

        def work(conn: Connection) -> ConversationRecord:
            if stmt.run(conn, params) == 1:
                return ConversationRecord(
                    conversation_id,
                    agent_id,
                    user_id,
                    channel,
                    parent_id,
                    idle,
                    now,
                    now,
                    now,
                    new=True,
                )
            return _record(_GET.rows(conn, {"b_id": conversation_id})[0])

        record = await self.db.write(work, small=True)
        if record.new:  # no messages yet: its first append needs no SELECT max(seq)
            self._last_seq[conversation_id] = 0
        return record

    async def get(self, conversation_id: str) -> ConversationRecord | None:
        rows = await self.db.read(
            lambda conn: _GET.rows(conn, {"b_id": conversation_id}), small=True
        )
        return _record(rows[0]) if rows else None

    async def list(self, *, include_children: bool = False) -> list[ConversationRecord]:
        query = sa.select(conversations).order_by(conversations.c.last_activity_at.desc())
        if not include_children:
            query = query.where(conversations.c.parent_id.is_(None))
        return await self.db.read(lambda conn: [_record(tuple(r)) for r in conn.execute(query)])

    async def busy(self) -> list[str]:
        """Conversations persisted mid-turn (neither idle nor error): to recover at start."""
        query = sa.select(conversations.c.id).where(conversations.c.state.not_in(_QUIET_STATES))
        return await self.db.read(lambda conn: [r[0] for r in conn.execute(query)])

    async def delete(self, conversation_id: str) -> bool:
        """Delete a conversation with its messages, runs and children. True if it existed."""

        def work(conn: Connection) -> bool:
            self._delete_tree(conn, [conversation_id])
            result = conn.execute(
                conversations.delete().where(conversations.c.id == conversation_id)
            )
            return result.rowcount > 0

        return await self.db.write(work)

    def _delete_tree(self, conn: Connection, ids: Sequence[str]) -> None:
        for conversation_id in ids:
            self._last_seq.pop(conversation_id, None)
        conn.execute(messages.delete().where(messages.c.conversation_id.in_(ids)))
        conn.execute(pending_runs.delete().where(pending_runs.c.conversation_id.in_(ids)))
        # Explicit children-first delete: cascades are not relied upon (SQLite may have
        # foreign keys off on connections created outside Database).
        children = [
            r[0]
            for r in conn.execute(
                sa.select(conversations.c.id).where(conversations.c.parent_id.in_(ids))
            )
        ]
        if children:
            self._delete_tree(conn, children)
            conn.execute(conversations.delete().where(conversations.c.id.in_(children)))

    def forget(self, conversation_id: str) -> None:
        """Drop what is cached for a conversation whose lane left memory (its next
        append reads its last ``seq`` from the database)."""
        self._last_seq.pop(conversation_id, None)

    async def delete_inactive(self, before: float, *, keep: Collection[str] = ()) -> list[str]:
        """History retention: delete top-level conversations (with their messages, runs
        and children) not in a turn and last active before ``before``, except ``keep``
        (those in use); their ids."""
        query = sa.select(conversations.c.id).where(
            conversations.c.last_activity_at < before,
            conversations.c.state.in_(_QUIET_STATES),
            conversations.c.parent_id.is_(None),
        )
        spared = set(keep)

        def work(conn: Connection) -> list[str]:
            ids = [r[0] for r in conn.execute(query) if r[0] not in spared]
            if ids:
                self._delete_tree(conn, ids)
                conn.execute(conversations.delete().where(conversations.c.id.in_(ids)))
            return ids

        return await self.db.write(work)

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
        update = _SET_STATE[activity]
        params = {
            "b_id": conversation_id,
            "b_state": state.kind,
            "b_state_data": state_to_json(state),
            "b_now": now,
        }
        runs = list(consumed_runs)

        def write(conn: Connection, seq: int | None) -> list[int]:
            update.run(conn, params)
            seqs = _append(conn, conversation_id, rows, now, seq)
            for run_id in runs:
                _DROP_RUN.run(conn, {"b_id": run_id})
            return seqs

        return await self._transaction(conversation_id, write)

    async def _transaction(
        self, conversation_id: str, write: Callable[[Connection, int | None], list[int]]
    ) -> list[int]:
        """Run ``write`` (given the cached last ``seq``) in one transaction; redo it once,
        reading ``seq`` from the database, if the cached value was stale."""
        for attempt in (1, 2):
            seq = self._last_seq.get(conversation_id)
            try:
                seqs = await self.db.write(lambda conn, seq=seq: write(conn, seq), small=True)
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

        def write(conn: Connection, seq: int | None) -> list[int]:
            _TOUCH.run(conn, {"b_id": conversation_id, "b_now": now})
            return _append(conn, conversation_id, rows, now, seq)

        return (await self._transaction(conversation_id, write))[0]

    async def messages(self, conversation_id: str, *, after_seq: int = 0) -> list[StoredMessage]:
        """Every row after ``after_seq``, in order (raw history including markers)."""
        return await self.db.read(partial(_rows_after, cid=conversation_id, after=after_seq))

    async def messages_after(self, after: dict[str, int]) -> dict[str, list[StoredMessage]]:
        """:meth:`messages` of several conversations (each after its own ``seq``) in one
        read transaction."""

        def work(conn: Connection) -> dict[str, list[StoredMessage]]:
            return {cid: _rows_after(conn, cid=cid, after=seq) for cid, seq in after.items()}

        return await self.db.read(work)

    async def view(self, conversation_id: str) -> View:
        """The LLM view: after the last reset; from the last summary's first kept message."""
        return await self.db.read(partial(_view, cid=conversation_id))

    async def view_rows(self, conversation_id: str) -> list[StoredMessage]:
        """The raw messages of the current view with their sequence numbers."""

        def work(conn: Connection) -> list[StoredMessage]:
            v = _view(conn, cid=conversation_id)
            rows = _rows_after(conn, cid=conversation_id, after=v.first_seq - 1)
            return [r for r in rows if r.message is not None]

        return await self.db.read(work)

    async def cost_since(self, agent_id: str, since: float) -> float:
        """USD spent by ``agent_id``'s conversations (children included) since ``since``."""
        query = (
            sa.select(sa.func.coalesce(sa.func.sum(messages.c.cost_usd), 0.0))
            .select_from(
                messages.join(conversations, messages.c.conversation_id == conversations.c.id)
            )
            .where(conversations.c.agent_id == agent_id, messages.c.created_at >= since)
        )
        total = await self.db.read(lambda conn: conn.execute(query).scalar())
        return float(total or 0.0)

    async def touch(self, conversation_id: str, now: float) -> None:
        stmt = (
            conversations.update()
            .where(conversations.c.id == conversation_id)
            .values(last_activity_at=now)
        )
        await self.db.write(lambda conn: conn.execute(stmt), small=True)

    # ------------------------------------------------------------ pending runs

    async def enqueue(
        self, conversation_id: str, run_id: str, payload: dict[str, Any], *, now: float
    ) -> int:
        def work(conn: Connection) -> int:
            ((last,),) = _MAX_POSITION.rows(conn, {"b_id": conversation_id})
            position = int(last or 0) + 1
            _INSERT_RUN.run(
                conn,
                {
                    "b_id": run_id,
                    "b_conversation": conversation_id,
                    "b_position": position,
                    "b_payload": payload,
                    "b_now": now,
                },
            )
            return position

        return await self.db.write(work, small=True)

    async def pending(self, conversation_id: str | None = None) -> list[PendingRunRecord]:
        query = sa.select(pending_runs).order_by(
            pending_runs.c.conversation_id, pending_runs.c.position
        )
        if conversation_id is not None:
            query = query.where(pending_runs.c.conversation_id == conversation_id)
        return await self.db.read(
            lambda conn: [
                PendingRunRecord(r.id, r.conversation_id, r.position, dict(r.payload), r.created_at)
                for r in conn.execute(query)
            ]
        )

    async def drop_runs(self, run_ids: Sequence[str]) -> None:
        if not run_ids:
            return
        runs = list(run_ids)

        def work(conn: Connection) -> None:
            for run_id in runs:
                _DROP_RUN.run(conn, {"b_id": run_id})

        await self.db.write(work, small=True)


def _append(
    conn: Connection,
    conversation_id: str,
    rows: Sequence[_Row],
    now: float,
    seq: int | None,
) -> list[int]:
    """INSERT ``rows`` after ``seq`` (read from the database when None)."""
    if not rows:
        return []
    if seq is None:
        ((last,),) = _MAX_SEQ.rows(conn, {"b_id": conversation_id})
        seq = int(last or 0)
    values: list[dict[str, Any]] = []
    for kind, message, data in rows:
        seq += 1
        if message is not None:
            usage = message.usage
            values.append(
                {
                    "b_conversation_id": conversation_id,
                    "b_seq": seq,
                    "b_kind": kind,
                    "b_role": message.role.value,
                    "b_content": message.model_dump(mode="json", exclude_defaults=True),
                    "b_usage": None if usage is None else usage.model_dump(mode="json"),
                    "b_cost_usd": None if usage is None else usage.cost_usd,
                    "b_now": now,
                }
            )
        else:
            values.append(
                {
                    "b_conversation_id": conversation_id,
                    "b_seq": seq,
                    "b_kind": kind,
                    "b_role": None,
                    "b_content": data or {},
                    "b_usage": None,
                    "b_cost_usd": None,
                    "b_now": now,
                }
            )
    _INSERT_MESSAGES.run_many(conn, values)
    return [v["b_seq"] for v in values]


def _rows_after(conn: Connection, *, cid: str, after: int) -> list[StoredMessage]:
    out: list[StoredMessage] = []
    for seq, kind, content, created in _ROWS_AFTER.rows(conn, {"b_id": cid, "b_after": after}):
        if kind == MESSAGE:
            out.append(StoredMessage(seq, kind, Message.model_validate(content), {}, created))
        else:
            out.append(StoredMessage(seq, kind, None, dict(content), created))
    return out


def _view(conn: Connection, *, cid: str) -> View:
    markers = _LAST_MARKER.rows(conn, {"b_id": cid})
    summary: str | None = None
    start = 0
    if markers:
        seq, kind, content = markers[0]
        if kind == RESET:
            start = seq
        else:
            summary = content.get("summary")
            start = int(content.get("first_kept_seq", seq + 1)) - 1
    rows = [r for r in _rows_after(conn, cid=cid, after=start) if r.message is not None]
    return View(
        summary,
        [r.message for r in rows if r.message is not None],
        rows[0].seq if rows else start + 1,
    )
