"""The ``messages`` log: append-only rows, one ``seq`` after another per conversation.

Invariants:

* Messages are only ever INSERTed, one row per message, with ``seq`` increasing by one
  per conversation: appending costs the same at message 10 and 10,000, and no history is
  rewritten. Compaction and resets append *marker* rows that move the start of the LLM
  view; the raw messages stay.
* The hot statements are prepared (built and compiled once): building a statement and
  its cache key costs more than running it on SQLite.
* :class:`SequenceHints` saves a ``SELECT max(seq)`` per append; a stale hint is never
  trusted past the unique key ``(conversation_id, seq)``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from beamclaw_core.messages import Message
from beamclaw_core.store.records import MESSAGE, RESET, SUMMARY, StoredMessage, View
from beamclaw_core.store.tables import messages
from beamclaw_memory import Prepared, Unit

Row = tuple[str, Message | None, dict[str, Any] | None]
"""One row to append: (kind, message or None, marker data or None)."""

_MAX_SEQ = Prepared(
    sa.select(sa.func.max(messages.c.seq)).where(messages.c.conversation_id == sa.bindparam("b_id"))
)
_COLUMNS = ("conversation_id", "seq", "kind", "role", "content", "usage", "cost_usd", "epoch")
_INSERT = Prepared(
    messages.insert().values(
        **{c: sa.bindparam(f"b_{c}") for c in _COLUMNS}, created_at=sa.bindparam("b_now")
    )
)


def _newest_of(kind: str) -> sa.Select[tuple[int]]:
    return sa.select(sa.func.max(messages.c.seq).label("seq")).where(
        messages.c.conversation_id == sa.bindparam("b_id"), messages.c.kind == kind
    )


_NEWEST_MARKER = sa.union_all(_newest_of(SUMMARY), _newest_of(RESET)).subquery()
_LAST_MARKER = Prepared(  # each kind's newest by ix_messages_kind: no scan of the messages
    sa.select(messages.c.seq, messages.c.kind, messages.c.content).where(
        messages.c.conversation_id == sa.bindparam("b_id"),
        messages.c.seq == sa.select(sa.func.max(_NEWEST_MARKER.c.seq)).scalar_subquery(),
    )
)
_LAST_RESET = Prepared(
    sa.select(sa.func.max(messages.c.seq)).where(
        messages.c.conversation_id == sa.bindparam("b_id"), messages.c.kind == RESET
    )
)
_ROWS_BEFORE = Prepared(
    sa.select(messages.c.seq, messages.c.kind, messages.c.content, messages.c.created_at)
    .where(
        messages.c.conversation_id == sa.bindparam("b_id"),
        messages.c.seq < sa.bindparam("b_before"),
    )
    .order_by(messages.c.seq.desc())
    .limit(sa.bindparam("b_limit"))
)
_ROWS_AFTER = Prepared(
    sa.select(messages.c.seq, messages.c.kind, messages.c.content, messages.c.created_at)
    .where(
        messages.c.conversation_id == sa.bindparam("b_id"),
        messages.c.seq > sa.bindparam("b_after"),
    )
    .order_by(messages.c.seq)
)

_PAGE = Prepared(
    sa.select(messages.c.seq, messages.c.kind, messages.c.content, messages.c.created_at)
    .where(
        messages.c.conversation_id == sa.bindparam("b_id"),
        messages.c.kind == MESSAGE,
        messages.c.seq < sa.bindparam("b_before"),
    )
    .order_by(messages.c.seq.desc())
    .limit(sa.bindparam("b_limit"))
)
_COUNT_BEFORE = Prepared(
    sa.select(sa.func.count())
    .select_from(messages)
    .where(
        messages.c.conversation_id == sa.bindparam("b_id"),
        messages.c.kind == MESSAGE,
        messages.c.seq < sa.bindparam("b_before"),
    )
)
_NO_BOUND = 2**31 - 1
"""``seq`` bound meaning "no upper bound" (a page with no ``before_seq``): the column is
a 32-bit integer on PostgreSQL."""


def page(
    unit: Unit, conversation_id: str, limit: int | None, before: int | None
) -> tuple[list[StoredMessage], int, int]:
    """The last ``limit`` messages (no markers) before ``seq`` ``before``, in order, with
    how many messages precede ``before`` and how many the conversation has: reads the
    page and two counts, never the whole history (``limit`` None: every one)."""
    bound = _NO_BOUND if before is None else before
    params = {"b_id": conversation_id, "b_before": bound}
    older = int(unit.rows(_COUNT_BEFORE, params)[0][0])
    total = (
        older
        if before is None
        else int(unit.rows(_COUNT_BEFORE, {"b_id": conversation_id, "b_before": _NO_BOUND})[0][0])
    )
    if limit is not None and limit <= 0:
        return [], older, total
    found = unit.rows(_PAGE, {**params, "b_limit": older if limit is None else limit})
    rows = [
        StoredMessage(seq, kind, Message.model_validate(content), {}, created)
        for seq, kind, content, created in reversed(found)
    ]
    return rows, older, total


def append(
    unit: Unit,
    conversation_id: str,
    rows: Sequence[Row],
    now: float,
    seq: int | None,
    epoch: int = 0,
) -> list[int]:
    """INSERT ``rows`` after ``seq`` (read from the database when None), written under
    the owner's lease ``epoch``; their seqs."""
    if not rows:
        return []
    if seq is None:
        ((last,),) = unit.rows(_MAX_SEQ, {"b_id": conversation_id})
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
                    "b_epoch": epoch,
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
                    "b_epoch": epoch,
                    "b_now": now,
                }
            )
    unit.run_many(_INSERT, values)
    return [v["b_seq"] for v in values]


def last_reset(unit: Unit, conversation_id: str) -> int | None:
    """The ``seq`` of the conversation's last reset marker (None: never reset)."""
    found = unit.rows(_LAST_RESET, {"b_id": conversation_id})
    return int(found[0][0]) if found and found[0][0] is not None else None


def rows_before(unit: Unit, conversation_id: str, before: int, limit: int) -> list[StoredMessage]:
    """The last ``limit`` rows before ``before``, in order (raw history with markers)."""
    found = unit.rows(_ROWS_BEFORE, {"b_id": conversation_id, "b_before": before, "b_limit": limit})
    return _stored(reversed(found))


def rows_after(unit: Unit, conversation_id: str, after: int) -> list[StoredMessage]:
    """Every row after ``after``, in order (raw history including markers)."""
    return _stored(unit.rows(_ROWS_AFTER, {"b_id": conversation_id, "b_after": after}))


def _stored(found: Iterable[Sequence[Any]]) -> list[StoredMessage]:
    out: list[StoredMessage] = []
    for seq, kind, content, created in found:
        if kind == MESSAGE:
            out.append(StoredMessage(seq, kind, Message.model_validate(content), {}, created))
        else:
            out.append(StoredMessage(seq, kind, None, dict(content), created))
    return out


def view(unit: Unit, conversation_id: str) -> View:
    """The LLM view: after the last reset; from the last summary's first kept message."""
    markers = unit.rows(_LAST_MARKER, {"b_id": conversation_id})
    summary: str | None = None
    start = 0
    if markers:
        seq, kind, content = markers[0]
        if kind == RESET:
            start = seq
        else:
            summary = content.get("summary")
            start = int(content.get("first_kept_seq", seq + 1)) - 1
    rows = [r for r in rows_after(unit, conversation_id, start) if r.message is not None]
    return View(
        summary,
        [r.message for r in rows if r.message is not None],
        rows[0].seq if rows else start + 1,
    )


def view_rows(unit: Unit, conversation_id: str) -> list[StoredMessage]:
    """The raw messages of the current view with their sequence numbers."""
    first = view(unit, conversation_id).first_seq
    return [r for r in rows_after(unit, conversation_id, first - 1) if r.message is not None]


class SequenceHints:
    """Last committed ``seq`` per conversation: saves a ``SELECT max(seq)`` per append.

    Only a hint. It is updated after a transaction commits, dropped when a conversation
    is deleted or leaves memory, and a stale value (another process appended, or a
    commit whose outcome was lost to a cancellation) surfaces as a unique-key violation
    on ``(conversation_id, seq)``, after which the transaction is redone once with the
    value read from the database.
    """

    def __init__(self) -> None:
        self._last: dict[str, int] = {}

    def known_empty(self, conversation_id: str) -> None:
        """A conversation just created: its first append needs no ``SELECT max(seq)``."""
        self._last[conversation_id] = 0

    def forget(self, *conversation_ids: str) -> None:
        for conversation_id in conversation_ids:
            self._last.pop(conversation_id, None)

    async def appending(
        self,
        conversation_id: str,
        write: Callable[[int | None], Awaitable[list[int]]],
    ) -> list[int]:
        """``write`` (given the hint, None when unknown) — one transaction appending
        rows; redone once, without the hint, if the hint was stale. Its seqs."""
        for attempt in (1, 2):
            seq = self._last.get(conversation_id)
            try:
                seqs = await write(seq)
            except IntegrityError:
                if attempt == 2 or self._last.pop(conversation_id, None) is None:
                    raise
                continue
            if seqs:
                self._last[conversation_id] = seqs[-1]
            return seqs
        raise AssertionError("unreachable")
