"""Where to reach a person (seed 004 ADR-030/032; issue 26): the channels they wrote from.

Every message a channel adapter hands in records ``(person, channel, target)`` with the
time (:meth:`PersonChannels.seen`, called by
:class:`~beamclaw_gateway.channel_inbound.ChannelTurns`); a scheduled job or heartbeat
with no explicit target (``deliver_to = "last"``) is delivered to the newest one that
takes it (:meth:`PersonChannels.reach`).

Invariants: one row per (person, channel, target), upserted in one statement, so it is
durable once ``seen`` returns and survives restarts; the person is the linked identity's
key (``Core.person``), so every linked account of one person shares one list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from beamclaw_gateway.tables import person_channels
from beamclaw_memory import Database, Unit


def _upsert_of(dialect: str) -> Any:
    """The dialect's ``insert`` (with ``on_conflict_do_update``), imported on first use:
    the gateway's start does not load a dialect it may never write with."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


@dataclass(frozen=True, slots=True)
class ChannelUse:
    """One channel a person wrote from: ``channel`` (the adapter) and ``target`` (where
    an answer goes on it), first and last time."""

    channel: str
    target: str
    first_seen_at: float
    last_used_at: float

    @property
    def deliver_to(self) -> str:
        """As a scheduled job names it: ``<channel>:<target>``."""
        return f"{self.channel}:{self.target}"


class PersonChannels:
    """The ``person_channels`` table (see the module)."""

    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self.db = db
        self._clock = clock

    async def seen(self, user_id: str, channel: str, target: str) -> None:
        """``user_id`` wrote from ``target`` on ``channel`` just now."""
        now = self._clock()
        insert = _upsert_of(self.db.dialect)

        def work(unit: Unit) -> None:
            statement = insert(person_channels).values(
                user_id=user_id,
                channel=channel,
                target=target,
                first_seen_at=now,
                last_used_at=now,
            )
            unit.execute(
                statement.on_conflict_do_update(
                    index_elements=["user_id", "channel", "target"],
                    set_={"last_used_at": now},
                )
            )

        await self.db.write(work)

    async def known(self, user_id: str) -> list[ChannelUse]:
        """Every channel ``user_id`` wrote from, the most recently used first."""

        def work(unit: Unit) -> list[ChannelUse]:
            rows = unit.execute(
                sa.select(
                    person_channels.c.channel,
                    person_channels.c.target,
                    person_channels.c.first_seen_at,
                    person_channels.c.last_used_at,
                )
                .where(person_channels.c.user_id == user_id)
                .order_by(person_channels.c.last_used_at.desc())
            ).all()
            return [ChannelUse(r[0], r[1], float(r[2]), float(r[3])) for r in rows]

        return await self.db.read(work)

    async def reach(self, user_id: str) -> list[str]:
        """Where to reach ``user_id``, best first (``<channel>:<target>``; empty: never
        wrote from a channel)."""
        return [use.deliver_to for use in await self.known(user_id)]
