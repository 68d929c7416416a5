"""Standing ``/always`` grants: per agent and person, durable, read from memory.

Answering an approval with *always* grants that tool to the person for that agent: every
session of theirs with the agent runs it without asking, across restarts, until the
grant is revoked. ``/new`` and ``/reset`` keep it. Autonomy still applies: the loop's
policy denies what the autonomy level forbids before it looks at grants.

Invariants:

* :meth:`AlwaysAllowlist.grant` returns only once the grant is committed; the executor
  awaits it before the tool runs, so a tool run on the strength of ``always`` is never
  ahead of its record. A second grant of the same (agent, person, tool) keeps the first
  row (its time and session).
* The database is the truth; the cache mirrors it for this process. It is loaded in one
  query by :meth:`AlwaysAllowlist.load` (``Core.start``) and changed only after a
  grant or revoke commits, so a lane's turn reads its grants without a query. Another
  process's grants and revokes are seen after a restart (multi-node invalidation comes
  with scale-out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from beamclaw_core.store.tables import always_allowed
from beamclaw_memory import Database, Prepared, Unit
from beamclaw_memory.dialect import dialect_insert

_COLUMNS = ("agent_id", "user_id", "tool", "session_id", "granted_at")


@dataclass(frozen=True, slots=True)
class AlwaysGrant:
    """One standing grant: ``user_id`` may run ``tool`` with ``agent_id`` unasked."""

    agent_id: str
    user_id: str
    tool: str
    granted_at: float
    """Epoch seconds of the answer that granted it."""
    session_id: str | None = None
    """The session the grant was given in (it outlives that session)."""


def _grant(row: Any) -> AlwaysGrant:
    m = dict(zip(_COLUMNS, tuple(row), strict=True))
    return AlwaysGrant(m["agent_id"], m["user_id"], m["tool"], m["granted_at"], m["session_id"])


def _where(
    agent_id: str | None, user_id: str | None, tool: str | None
) -> list[sa.ColumnElement[bool]]:
    c = always_allowed.c
    pairs = ((c.agent_id, agent_id), (c.user_id, user_id), (c.tool, tool))
    return [column == value for column, value in pairs if value is not None]


def _grant_statement(dialect: str) -> sa.Executable:
    return (
        dialect_insert(dialect, always_allowed)
        .values(**{c: sa.bindparam(f"b_{c}") for c in _COLUMNS})
        .on_conflict_do_nothing(index_elements=["agent_id", "user_id", "tool"])
    )


_c = always_allowed.c
_KEY = (
    _c.agent_id == sa.bindparam("b_agent_id"),
    _c.user_id == sa.bindparam("b_user_id"),
)
_TOOL = _c.tool == sa.bindparam("b_tool")
_GRANT = Prepared(_grant_statement)
_GRANTED = Prepared(sa.select(*always_allowed.c).where(*_KEY, _TOOL))
_REVOKE_ONE = Prepared(always_allowed.delete().where(*_KEY, _TOOL))
_REVOKE_ALL = Prepared(always_allowed.delete().where(*_KEY))


class AlwaysAllowlist:
    """The standing grants of every agent and person, over the shared database."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self.db = database
        self._clock = clock
        self._tools: dict[tuple[str, str], frozenset[str]] = {}
        self._writing = asyncio.Lock()
        """One grant or revoke at a time: the cache changes in commit order."""

    async def load(self) -> None:
        """(Re)fill the cache from the database: one query."""

        def work(unit: Unit) -> list[AlwaysGrant]:
            return [_grant(r) for r in unit.execute(sa.select(*always_allowed.c))]

        tools: dict[tuple[str, str], set[str]] = {}
        for grant in await self.db.read(work):
            tools.setdefault((grant.agent_id, grant.user_id), set()).add(grant.tool)
        self._tools = {key: frozenset(names) for key, names in tools.items()}

    def tools(self, agent_id: str, user_id: str) -> frozenset[str]:
        """The tools ``user_id`` granted to ``agent_id`` (from memory, no query)."""
        return self._tools.get((agent_id, user_id), frozenset())

    def person(self, agent_id: str, user_id: str, session_id: str) -> PersonAllowlist:
        """The grants as one session of ``user_id`` with ``agent_id`` sees and adds them."""
        return PersonAllowlist(self, agent_id, user_id, session_id)

    async def grant(
        self, agent_id: str, user_id: str, tool: str, *, session_id: str | None = None
    ) -> AlwaysGrant:
        """Record the grant (committed when this returns); the existing one if any."""
        new = AlwaysGrant(agent_id, user_id, tool, self._clock(), session_id)
        params = {
            "b_agent_id": agent_id,
            "b_user_id": user_id,
            "b_tool": tool,
            "b_session_id": session_id,
            "b_granted_at": new.granted_at,
        }

        def work(unit: Unit) -> AlwaysGrant:
            if unit.run(_GRANT, params) == 1:
                return new
            return _grant(unit.rows(_GRANTED, params)[0])

        async with self._writing:
            stored = await self.db.write(work)
            self._tools[agent_id, user_id] = self.tools(agent_id, user_id) | {tool}
        return stored

    async def list(
        self, *, agent_id: str | None = None, user_id: str | None = None
    ) -> list[AlwaysGrant]:
        """Stored grants (of one agent and/or person), by agent, person and tool."""
        c = always_allowed.c
        query = (
            sa.select(*always_allowed.c)
            .where(*_where(agent_id, user_id, None))
            .order_by(c.agent_id, c.user_id, c.tool)
        )

        def work(unit: Unit) -> list[AlwaysGrant]:
            return [_grant(r) for r in unit.execute(query)]

        return await self.db.read(work)

    async def revoke(self, agent_id: str, user_id: str, tool: str | None = None) -> int:
        """End one grant, or (``tool`` None) every grant of ``user_id`` for ``agent_id``.

        Returns how many ended. Sessions ask again from their next turn on.
        """
        statement = _REVOKE_ALL if tool is None else _REVOKE_ONE
        params = {"b_agent_id": agent_id, "b_user_id": user_id}
        if tool is not None:
            params["b_tool"] = tool

        def work(unit: Unit) -> int:
            return unit.run(statement, params)

        async with self._writing:
            removed = await self.db.write(work)
            left = self.tools(agent_id, user_id) - {tool} if tool else frozenset[str]()
            if left:
                self._tools[agent_id, user_id] = left
            else:
                self._tools.pop((agent_id, user_id), None)
        return removed


@dataclass(frozen=True, slots=True)
class PersonAllowlist:
    """One session's window on its person's grants for its agent (a lane holds it).

    Iterating reads the shared cache as it is now; :meth:`add` grants durably.
    """

    grants: AlwaysAllowlist
    agent_id: str
    user_id: str
    session_id: str

    def __iter__(self) -> Iterator[str]:
        return iter(self.grants.tools(self.agent_id, self.user_id))

    def __contains__(self, tool: object) -> bool:
        return tool in self.grants.tools(self.agent_id, self.user_id)

    async def add(self, tool: str) -> None:
        """``always``: grant ``tool`` for this person and agent (committed on return)."""
        await self.grants.grant(self.agent_id, self.user_id, tool, session_id=self.session_id)
