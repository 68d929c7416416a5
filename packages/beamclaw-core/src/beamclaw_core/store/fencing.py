"""Fencing tokens: a conversation's writes carry its owner's lease epoch.

In cluster mode (docs/scale-out.md) one node at a time owns a session through a lease
whose every grant has a larger *epoch*. The store writes the epoch its node holds with
every message row and turn state, and refuses the write — in the same transaction, before
anything is written — when the conversation already carries a newer one: a node that
paused past its lease and woke up cannot overwrite the history its successor writes.

Invariants:

* :class:`Fences` is only a map of the epochs this process holds; the database's
  ``conversations.owner_epoch`` is the truth, compared and raised in one ``UPDATE``.
* A conversation this process holds no epoch for is written with epoch 0 — a single node
  always does, and so do migrations' old rows — which never fails against 0 and always
  fails against a newer owner's epoch.
* :func:`stored_epoch` is what a lease's epoch counter is seeded from when the counter
  is lost (a flushed Redis): the next grant is above every epoch the store has seen.
"""

from __future__ import annotations

import sqlalchemy as sa

from beamclaw_core.errors import BeamclawCoreError
from beamclaw_core.store.tables import conversations
from beamclaw_memory import Database, Prepared, Unit

_EPOCH_OF = Prepared(
    sa.select(conversations.c.owner_epoch).where(conversations.c.id == sa.bindparam("b_id"))
)


class StaleOwnerError(BeamclawCoreError):
    """A write under an epoch older than the conversation's: another node owns it now."""

    def __init__(self, conversation_id: str, epoch: int, current: int) -> None:
        self.conversation_id = conversation_id
        self.epoch = epoch
        self.current = current
        super().__init__(
            f"conversation {conversation_id!r}: write under epoch {epoch} refused, "
            f"it is owned under epoch {current}"
        )


class Fences:
    """The lease epoch this process holds per conversation (none held: 0)."""

    def __init__(self) -> None:
        self._held: dict[str, int] = {}

    def hold(self, conversation_id: str, epoch: int) -> None:
        self._held[conversation_id] = epoch

    def drop(self, conversation_id: str) -> None:
        self._held.pop(conversation_id, None)

    def epoch(self, conversation_id: str) -> int:
        return self._held.get(conversation_id, 0)


def refuse_if_stale(unit: Unit, conversation_id: str, epoch: int, changed: int) -> None:
    """After a fenced ``UPDATE`` that changed ``changed`` rows: raise
    :class:`StaleOwnerError` when it changed none because the stored epoch is newer (a
    missing conversation is not this module's business)."""
    if changed:
        return
    found = unit.rows(_EPOCH_OF, {"b_id": conversation_id})
    if found and int(found[0][0]) > epoch:
        raise StaleOwnerError(conversation_id, epoch, int(found[0][0]))


async def stored_epoch(database: Database, conversation_id: str) -> int:
    """The epoch ``conversation_id`` was last written under (0: never, or no such
    conversation, e.g. the name of a cluster duty)."""
    found = await database.read(lambda unit: unit.rows(_EPOCH_OF, {"b_id": conversation_id}))
    return int(found[0][0]) if found else 0
