"""Persisted exactly-once bookkeeping of the Telegram channel: the update log and the outbox.

Invariants:

* An update is written to ``telegram_updates`` (``received``) *before* its offset is
  confirmed to Telegram (the next ``getUpdates`` offset is the highest stored id + 1), so a
  crash never loses one: a restart re-reads every row that is not ``done``.
* ``claim`` inserts at most once per ``update_id``: a redelivered update is not run again.
* ``handed`` means the message is durable in its session (``Core.send`` returned);
  ``done`` is written in the same transaction as the answer's outbox row, so an answer is
  either in the outbox or recoverable from the session, never both lost and never twice.
* An outbox row is unique by ``ref``; ``sent_chunks`` grows after each chunk Telegram
  accepted, so a restart resends at most the one chunk that was in flight.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from beamclaw_gateway.tables import telegram_outbox, telegram_updates
from beamclaw_memory import Database, Unit

UpdateState = Literal["received", "handed", "done"]
KEEP_DONE_SECONDS = 7 * 86_400.0
"""How long handled updates and sent outbox rows are kept (the newest update always is)."""


@dataclass(frozen=True, slots=True)
class StoredUpdate:
    update_id: int
    state: UpdateState
    payload: dict[str, Any]
    session_id: str | None


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """One message to send: ``text`` split into chunks at send time, from ``sent_chunks``."""

    id: int
    ref: str
    chat_id: int
    text: str
    reply_to: int | None
    sent_chunks: int
    message_ids: tuple[int, ...]
    state: str
    created_at: float


def _insert(db: Database) -> Any:
    return postgresql.insert if db.dialect == "postgresql" else sqlite.insert


def _item(row: Any) -> OutboxItem:
    ids = row.message_ids if isinstance(row.message_ids, list) else json.loads(row.message_ids)
    return OutboxItem(
        row.id,
        row.ref,
        row.chat_id,
        row.text,
        row.reply_to,
        row.sent_chunks,
        tuple(int(i) for i in ids),  # pyright: ignore[reportUnknownArgumentType,reportUnknownVariableType]
        row.state,
        row.created_at,
    )


class UpdateLog:
    """``telegram_updates``: which updates were received and how far each got."""

    def __init__(self, db: Database, clock: Callable[[], float], node: str | None = None) -> None:
        """``node``: the cluster node this log records as handling what it claims (None:
        a single node)."""
        self.db = db
        self._clock = clock
        self.node = node

    async def claim(
        self, update_id: int, payload: dict[str, Any], chat_id: int | None, message_id: int | None
    ) -> bool:
        """Record a received update; False when it was received before."""
        now = self._clock()
        insert = _insert(self.db)

        def work(unit: Unit) -> bool:
            result = unit.execute(
                insert(telegram_updates)
                .values(
                    update_id=update_id,
                    state="received",
                    payload=payload,
                    chat_id=chat_id,
                    message_id=message_id,
                    received_at=now,
                    updated_at=now,
                    node=self.node,
                )
                .on_conflict_do_nothing(index_elements=["update_id"])
            )
            return result.rowcount == 1

        return await self.db.write(work)

    async def mark(self, update_id: int, state: UpdateState, session_id: str | None = None) -> None:
        now = self._clock()
        values: dict[str, Any] = {"state": state, "updated_at": now}
        if session_id is not None:
            values["session_id"] = session_id

        def work(unit: Unit) -> None:
            unit.execute(
                sa.update(telegram_updates)
                .where(telegram_updates.c.update_id == update_id)
                .values(**values)
            )

        await self.db.write(work)

    async def unfinished(self, *, mine: bool = False) -> list[StoredUpdate]:
        """Updates received but not ``done``, oldest first (what a restart takes up);
        ``mine``: only those this log's node handles."""

        def work(unit: Unit) -> list[StoredUpdate]:
            query = sa.select(telegram_updates).where(telegram_updates.c.state != "done")
            if mine:
                query = query.where(telegram_updates.c.node.is_not_distinct_from(self.node))
            rows = unit.execute(query.order_by(telegram_updates.c.update_id))
            return [StoredUpdate(r.update_id, r.state, r.payload, r.session_id) for r in rows]

        return await self.db.read(work)

    async def handlers(self) -> set[str | None]:
        """The nodes handling unfinished updates (None: updates no node recorded)."""

        def work(unit: Unit) -> set[str | None]:
            query = sa.select(telegram_updates.c.node).where(telegram_updates.c.state != "done")
            return {r[0] for r in unit.execute(query.distinct())}

        return await self.db.read(work)

    async def adopt(self, node: str | None) -> list[StoredUpdate]:
        """Make this log's node the handler of ``node``'s unfinished updates (it is gone);
        returns them, oldest first."""
        now = self._clock()

        def work(unit: Unit) -> list[StoredUpdate]:
            rows = unit.execute(
                sa.update(telegram_updates)
                .where(
                    telegram_updates.c.state != "done",
                    telegram_updates.c.node.is_not_distinct_from(node),
                )
                .values(node=self.node, updated_at=now)
                .returning(
                    telegram_updates.c.update_id,
                    telegram_updates.c.state,
                    telegram_updates.c.payload,
                    telegram_updates.c.session_id,
                )
            )
            adopted = [StoredUpdate(r[0], r[1], r[2], r[3]) for r in rows]
            return sorted(adopted, key=lambda u: u.update_id)

        return await self.db.write(work)

    async def next_offset(self) -> int | None:
        """The ``getUpdates`` offset confirming every stored update (None: none stored)."""

        def work(unit: Unit) -> int | None:
            top = unit.execute(sa.select(sa.func.max(telegram_updates.c.update_id))).scalar()
            return None if top is None else int(top) + 1

        return await self.db.read(work)

    async def prune(self, keep_seconds: float = KEEP_DONE_SECONDS) -> int:
        """Forget ``done`` updates older than ``keep_seconds`` (the newest one stays, so
        the offset survives); sent outbox rows too. Returns updates removed."""
        before = self._clock() - keep_seconds

        def work(unit: Unit) -> int:
            top = unit.execute(sa.select(sa.func.max(telegram_updates.c.update_id))).scalar()
            gone = unit.execute(
                sa.delete(telegram_updates).where(
                    telegram_updates.c.state == "done",
                    telegram_updates.c.updated_at < before,
                    telegram_updates.c.update_id != (top or 0),
                )
            ).rowcount
            unit.execute(
                sa.delete(telegram_outbox).where(
                    telegram_outbox.c.state != "pending", telegram_outbox.c.created_at < before
                )
            )
            return int(gone)

        return await self.db.write(work)


class Outbox:
    """``telegram_outbox``: messages Telegram must receive once each."""

    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self.db = db
        self._clock = clock

    async def put(
        self,
        ref: str,
        chat_id: int,
        text: str,
        *,
        reply_to: int | None = None,
        drafts: tuple[int, ...] = (),
    ) -> OutboxItem | None:
        """Store a message to send; None when ``ref`` is in the outbox already (it is
        being, or was, sent). A reply (``reply_to``) marks the update of the message it
        answers ``done`` in the same unit. ``drafts``: messages already showing a draft of
        it, edited into its first chunks instead of sending new ones."""
        now = self._clock()
        insert = _insert(self.db)

        def work(unit: Unit) -> OutboxItem | None:
            result = unit.execute(
                insert(telegram_outbox)
                .values(
                    ref=ref,
                    chat_id=chat_id,
                    reply_to=reply_to,
                    text=text,
                    state="pending",
                    sent_chunks=0,
                    message_ids=list(drafts),
                    attempts=0,
                    created_at=now,
                )
                .on_conflict_do_nothing(index_elements=["ref"])
            )
            if reply_to is not None:
                unit.execute(
                    sa.update(telegram_updates)
                    .where(
                        telegram_updates.c.chat_id == chat_id,
                        telegram_updates.c.message_id == reply_to,
                    )
                    .values(state="done", updated_at=now)
                )
            if result.rowcount != 1:
                return None
            row = unit.execute(sa.select(telegram_outbox).where(telegram_outbox.c.ref == ref)).one()
            return _item(row)

        return await self.db.write(work)

    async def has(self, ref: str) -> bool:
        def work(unit: Unit) -> bool:
            found = unit.execute(
                sa.select(telegram_outbox.c.id).where(telegram_outbox.c.ref == ref)
            ).first()
            return found is not None

        return await self.db.read(work)

    async def get(self, item_id: int) -> OutboxItem | None:
        def work(unit: Unit) -> OutboxItem | None:
            row = unit.execute(
                sa.select(telegram_outbox).where(telegram_outbox.c.id == item_id)
            ).first()
            return None if row is None else _item(row)

        return await self.db.read(work)

    async def pending(self) -> list[OutboxItem]:
        def work(unit: Unit) -> list[OutboxItem]:
            rows = unit.execute(
                sa.select(telegram_outbox)
                .where(telegram_outbox.c.state == "pending")
                .order_by(telegram_outbox.c.id)
            )
            return [_item(r) for r in rows]

        return await self.db.read(work)

    async def progress(self, item_id: int, sent_chunks: int, message_ids: tuple[int, ...]) -> None:
        """Chunks ``< sent_chunks`` reached Telegram (as ``message_ids``)."""

        def work(unit: Unit) -> None:
            unit.execute(
                sa.update(telegram_outbox)
                .where(telegram_outbox.c.id == item_id)
                .values(sent_chunks=sent_chunks, message_ids=list(message_ids))
            )

        await self.db.write(work)

    async def finish(
        self, item_id: int, state: Literal["sent", "failed"], error: str | None
    ) -> None:
        now = self._clock()

        def work(unit: Unit) -> None:
            unit.execute(
                sa.update(telegram_outbox)
                .where(telegram_outbox.c.id == item_id)
                .values(
                    state=state,
                    sent_at=now,
                    last_error=error,
                    attempts=telegram_outbox.c.attempts + 1,
                )
            )

        await self.db.write(work)

    async def failed_attempt(self, item_id: int, error: str) -> None:
        def work(unit: Unit) -> None:
            unit.execute(
                sa.update(telegram_outbox)
                .where(telegram_outbox.c.id == item_id)
                .values(last_error=error, attempts=telegram_outbox.c.attempts + 1)
            )

        await self.db.write(work)
