"""The conversation store: conversations, their append-only messages, queued runs.

Each public method is one unit of work (:meth:`~beamclaw_memory.Database.read` or
``write``, one transaction) composed of steps from the store's modules:
:mod:`~beamclaw_core.store.conversation_rows` (the conversation and its state),
:mod:`~beamclaw_core.store.message_log` (the append-only messages),
:mod:`~beamclaw_core.store.run_queue` (queued runs) and
:mod:`~beamclaw_core.store.listing` (questions over many conversations). Where a unit
runs is the database's decision (a store's hot units are made of prepared statements).

Invariants:

* :meth:`ConversationStore.commit` writes a transition atomically: the new state, its
  messages and the consumed pending runs in one transaction. A ``kill -9`` at any instant
  leaves either all of it or none of it.
* Message rows and turn states are fenced (:mod:`~beamclaw_core.store.fencing`): a
  write under a stale lease epoch is refused inside its own transaction.
* Write transactions hold SQLite's write lock from their first statement, so a
  read-then-write never fails half-way because another connection committed in between.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from beamclaw_core.loop.states import State
from beamclaw_core.messages import Message
from beamclaw_core.store import conversation_rows as rows
from beamclaw_core.store import listing, message_log, run_queue
from beamclaw_core.store.fencing import Fences
from beamclaw_core.store.message_log import Row, SequenceHints
from beamclaw_core.store.records import (
    MESSAGE,
    RESET,
    ConversationRecord,
    PendingRunRecord,
    StoredMessage,
    UsageRow,
    View,
)
from beamclaw_memory import Database, Unit


class ConversationStore:
    """Conversation persistence over the shared :class:`~beamclaw_memory.Database`."""

    def __init__(self, database: Database) -> None:
        self.db = database
        self._seqs = SequenceHints()
        self._resets: dict[str, int | None] = {}
        """Each conversation's last reset marker (None: never reset), as this process
        last wrote or read it: the same lifetime as the ``seq`` hints (dropped by
        :meth:`forget` and :meth:`delete`), so it holds while the conversation's lane is
        in memory, and every reset is the lane's own (another node's write refreshes
        the lane, which forgets it)."""
        self._reset_appends = 0
        """Reset markers appended: a read that a reset overtook does not store its
        answer."""
        self.fences = Fences()
        """The lease epochs this node holds (cluster mode): every message row and turn
        state is written under its conversation's, and refused when stale."""

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

        def work(unit: Unit) -> ConversationRecord:
            return rows.ensure(
                unit,
                conversation_id,
                agent_id=agent_id,
                user_id=user_id,
                channel=channel,
                parent_id=parent_id,
                now=now,
            )

        record = await self.db.write(work)
        if record.new:
            self._seqs.known_empty(conversation_id)
            self._resets[conversation_id] = None
        return record

    async def get(self, conversation_id: str) -> ConversationRecord | None:
        return await self.db.read(lambda unit: rows.get(unit, conversation_id))

    async def list(self, *, include_children: bool = False) -> list[ConversationRecord]:
        return await self.db.read(
            lambda unit: listing.every(unit, include_children=include_children)
        )

    async def busy(self) -> list[str]:
        """Conversations persisted mid-turn (neither idle nor error): to recover at start."""
        return await self.db.read(listing.busy)

    async def delete(self, conversation_id: str) -> bool:
        """Delete a conversation with its messages, runs and children. True if it existed."""
        existed, deleted = await self.db.write(
            lambda unit: rows.delete_trees(unit, [conversation_id])
        )
        self._forget(*deleted)
        return existed > 0

    def forget(self, conversation_id: str) -> None:
        """Drop what is cached for a conversation whose lane left memory (its next
        append reads its last ``seq``, its next :meth:`last_reset` the last reset, from
        the database)."""
        self._forget(conversation_id)

    def _forget(self, *conversation_ids: str) -> None:
        self._seqs.forget(*conversation_ids)
        for conversation_id in conversation_ids:
            self._resets.pop(conversation_id, None)

    async def delete_inactive(self, before: float, *, keep: Collection[str] = ()) -> list[str]:
        """History retention: delete top-level conversations (with their messages, runs
        and children) not in a turn and last active before ``before``, except ``keep``
        (those in use); their ids. On PostgreSQL one node at a time sweeps (an advisory
        lock; a node that finds it taken deletes nothing this time)."""
        spared = set(keep)

        def work(unit: Unit) -> tuple[list[str], list[str]]:
            if not listing.sweep_lock(unit):
                return [], []  # another node sweeps now
            ids = listing.inactive(unit, before, keep=spared)
            return ids, rows.delete_trees(unit, ids)[1] if ids else []

        ids, deleted = await self.db.write(work)
        self._forget(*deleted)
        return ids

    async def cost_since(self, agent_id: str, since: float) -> float:
        """USD spent by ``agent_id``'s conversations (children included) since ``since``."""
        return await self.db.read(lambda unit: listing.cost_since(unit, agent_id, since))

    async def message_counts(self) -> dict[str, int]:
        """Stored messages per conversation (those with none are absent)."""
        return await self.db.read(listing.message_counts)

    async def usage_since(self, since: float) -> list[UsageRow]:
        """Recorded usage of every message since ``since``, oldest first (usage reports)."""
        return await self.db.read(lambda unit: listing.usage_since(unit, since))

    async def touch(self, conversation_id: str, now: float) -> None:
        await self.db.write(lambda unit: rows.touch(unit, conversation_id, now))

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
        messages. Raises :class:`~beamclaw_core.store.fencing.StaleOwnerError` (nothing
        written) when another node owns the conversation under a newer lease epoch.
        """
        appended: list[Row] = [(MESSAGE, m, None) for m in new_messages]
        runs = list(consumed_runs)
        epoch = self.fences.epoch(conversation_id)

        def work(unit: Unit, seq: int | None) -> list[int]:
            rows.set_state(unit, conversation_id, state, now=now, activity=activity, epoch=epoch)
            seqs = message_log.append(unit, conversation_id, appended, now, seq, epoch)
            run_queue.drop(unit, runs)
            return seqs

        return await self._seqs.appending(
            conversation_id, lambda seq: self.db.write(lambda unit: work(unit, seq))
        )

    async def append_marker(
        self, conversation_id: str, kind: str, data: dict[str, Any], *, now: float
    ) -> int:
        """Append a ``summary`` or ``reset`` marker row; returns its sequence number."""
        appended: list[Row] = [(kind, None, data)]
        epoch = self.fences.epoch(conversation_id)

        def work(unit: Unit, seq: int | None) -> list[int]:
            rows.changed(unit, conversation_id, now, epoch=epoch)
            return message_log.append(unit, conversation_id, appended, now, seq, epoch)

        if kind == RESET:  # unknown until it is known committed (a lost outcome re-reads)
            self._reset_appends += 1
            self._resets.pop(conversation_id, None)
        seqs = await self._seqs.appending(
            conversation_id, lambda seq: self.db.write(lambda unit: work(unit, seq))
        )
        if kind == RESET:
            self._resets[conversation_id] = seqs[0]
        return seqs[0]

    async def messages(self, conversation_id: str, *, after_seq: int = 0) -> list[StoredMessage]:
        """Every row after ``after_seq``, in order (raw history including markers)."""
        return await self.db.read(
            lambda unit: message_log.rows_after(unit, conversation_id, after_seq)
        )

    async def message_page(
        self, conversation_id: str, *, limit: int | None, before_seq: int | None = None
    ) -> tuple[list[StoredMessage], int, int]:
        """``(page, messages before before_seq, messages in all)``: the last ``limit``
        messages before ``before_seq`` (markers left out), in order; cost follows the
        page, not the history (:func:`message_log.page`)."""
        return await self.db.read(
            lambda unit: message_log.page(unit, conversation_id, limit, before_seq)
        )

    async def last_reset(self, conversation_id: str) -> int | None:
        """The ``seq`` of the conversation's last reset marker (None: never reset); read
        once while the conversation stays in memory (see ``_resets``), so a turn that
        asks costs no read."""
        if conversation_id in self._resets:
            return self._resets[conversation_id]
        appends = self._reset_appends
        found = await self.db.read(lambda unit: message_log.last_reset(unit, conversation_id))
        if appends == self._reset_appends:
            self._resets[conversation_id] = found
        return found

    async def messages_before(
        self, conversation_id: str, before_seq: int, *, limit: int
    ) -> list[StoredMessage]:
        """The last ``limit`` rows before ``before_seq``, in order (markers included)."""
        return await self.db.read(
            lambda unit: message_log.rows_before(unit, conversation_id, before_seq, limit)
        )

    async def messages_after(self, after: dict[str, int]) -> dict[str, list[StoredMessage]]:
        """:meth:`messages` of several conversations (each after its own ``seq``) in one
        read transaction."""
        return await self.db.read(
            lambda unit: {cid: message_log.rows_after(unit, cid, seq) for cid, seq in after.items()}
        )

    async def view(self, conversation_id: str) -> View:
        """The LLM view: after the last reset; from the last summary's first kept message."""
        return await self.db.read(lambda unit: message_log.view(unit, conversation_id))

    async def view_rows(self, conversation_id: str) -> list[StoredMessage]:
        """The raw messages of the current view with their sequence numbers."""
        return await self.db.read(lambda unit: message_log.view_rows(unit, conversation_id))

    # ------------------------------------------------------------ pending runs

    async def enqueue(
        self, conversation_id: str, run_id: str, payload: dict[str, Any], *, now: float
    ) -> int:
        return await self.db.write(
            lambda unit: run_queue.enqueue(unit, conversation_id, run_id, payload, now)
        )

    async def pending(self, conversation_id: str | None = None) -> list[PendingRunRecord]:
        return await self.db.read(lambda unit: run_queue.pending(unit, conversation_id))

    async def drop_runs(self, run_ids: Sequence[str]) -> None:
        if not run_ids:
            return
        runs = list(run_ids)
        await self.db.write(lambda unit: run_queue.drop(unit, runs))
