"""One person across channels: channel accounts linked to a person, so the TUI, the API,
a WebSocket client, the web page and Telegram of one person share one history.

A *channel account* is the user id a front end reports (``local:ann`` from the TUI,
``api:ann`` from ``X-User-Id: ann``, ``ws:ann``, ``tg:123456``). Unlinked, an account is
a person of its own (as before identities existed). Linked, it speaks for its person:
its messages go to the person's sessions (with ``session_sharing = "shared"``, one per
agent; ``per_channel`` keeps one per channel) and its ``/always`` grants are the
person's.

Invariants:

* Every account of a person resolves to the same *session key*, the user id the
  person's sessions are stored and derived under. A new person's key is its own id; a
  person created by linking an account that already has history takes that account's
  id as its key, so the history goes on under the person instead of being left behind.
* A link never merges two histories: linking an account with history to a person with
  history (under another key) is refused (:class:`IdentityConflictError`), as is linking
  an account that already belongs to another person (unlink it first). Unlinking leaves
  every message where it is: the account starts over as a person of its own, and the
  person keeps the history.
* The database is the truth, the maps mirror it for this process (loaded by
  :meth:`Identities.load` at start, changed only after a write commits), so resolving an
  account costs a dict lookup. Another process sees a link after its restart
  (multi-node invalidation comes with scale-out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from beamclaw_core.errors import BeamclawCoreError
from beamclaw_core.store.tables import conversations, identity_links, persons
from beamclaw_memory import Database, Unit

MAX_ID = 256


class IdentityError(BeamclawCoreError):
    """Base of identity errors."""


class IdentityConflictError(IdentityError):
    """The link would merge two people's histories, or move an account between people."""


class UnknownAccountError(IdentityError):
    """The account is linked to nobody."""

    def __init__(self, account: str) -> None:
        self.account = account
        super().__init__(f"account {account!r} is not linked to a person")


@dataclass(frozen=True, slots=True)
class IdentityLink:
    """``account`` speaks for ``person_id``, whose sessions are keyed by ``session_key``."""

    account: str
    person_id: str
    session_key: str
    linked_at: float


def _check(kind: str, value: str) -> str:
    value = value.strip()
    if not value or len(value) > MAX_ID:
        raise IdentityError(f"{kind} must be 1 to {MAX_ID} characters")
    return value


def _has_history(unit: Unit, user_id: str) -> bool:
    query = sa.select(conversations.c.id).where(conversations.c.user_id == user_id).limit(1)
    return unit.execute(query).first() is not None


_LINKS = sa.select(
    identity_links.c.account,
    identity_links.c.person_id,
    persons.c.session_key,
    identity_links.c.linked_at,
).select_from(identity_links.outerjoin(persons, persons.c.person_id == identity_links.c.person_id))
"""Links with their person's session key."""


def _link(row: Any) -> IdentityLink:
    return IdentityLink(row.account, row.person_id, row.session_key or row.person_id, row.linked_at)


class Identities:
    """The links of every channel account, over the shared database."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self.db = database
        self._clock = clock
        self._person: dict[str, str] = {}
        """account -> person"""
        self._key: dict[str, str] = {}
        """person -> session key"""
        self._writing = asyncio.Lock()

    async def load(self) -> None:
        """(Re)fill the maps from the database: two queries."""

        def work(unit: Unit) -> tuple[dict[str, str], dict[str, str]]:
            keys = {r.person_id: r.session_key for r in unit.execute(sa.select(persons))}
            links = {r.account: r.person_id for r in unit.execute(sa.select(identity_links))}
            return links, keys

        self._person, self._key = await self.db.read(work)

    def session_key(self, account: str) -> str:
        """The user id ``account``'s sessions are keyed by (itself when unlinked)."""
        person = self._person.get(account)
        return account if person is None else self._key.get(person, person)

    def person_of(self, account: str) -> str | None:
        return self._person.get(account)

    async def link(self, account: str, person: str) -> IdentityLink:
        """Let ``account`` speak for ``person`` (created when new); see the invariants."""
        account, person = _check("account", account), _check("person", person)
        now = self._clock()

        def work(unit: Unit) -> IdentityLink:
            row = unit.execute(
                sa.select(identity_links.c.person_id).where(identity_links.c.account == account)
            ).first()
            if row is not None and row.person_id != person:
                raise IdentityConflictError(
                    f"account {account!r} belongs to {row.person_id!r}; unlink it first"
                )
            key_row = unit.execute(
                sa.select(persons.c.session_key).where(persons.c.person_id == person)
            ).first()
            person_key = key_row.session_key if key_row is not None else person
            own_key = account if row is None else person_key
            if own_key != person_key:
                mine, theirs = _has_history(unit, own_key), _has_history(unit, person_key)
                if mine and theirs:
                    raise IdentityConflictError(
                        f"both {account!r} and {person!r} have conversations; linking would "
                        "merge two people's histories (use another person id, or delete one "
                        "history first)"
                    )
                if mine:
                    person_key = own_key  # the account's history becomes the person's
            if key_row is None:
                unit.execute(
                    sa.insert(persons).values(
                        person_id=person, session_key=person_key, created_at=now
                    )
                )
            elif key_row.session_key != person_key:
                unit.execute(
                    sa.update(persons)
                    .where(persons.c.person_id == person)
                    .values(session_key=person_key)
                )
            if row is None:
                unit.execute(
                    sa.insert(identity_links).values(
                        account=account, person_id=person, linked_at=now
                    )
                )
            return IdentityLink(account, person, person_key, now)

        async with self._writing:
            link = await self.db.write(work)
            self._person[account] = person
            self._key[person] = link.session_key
        return link

    async def unlink(self, account: str) -> IdentityLink:
        """``account`` speaks for itself again; raises :class:`UnknownAccountError`."""
        account = _check("account", account)

        def work(unit: Unit) -> IdentityLink | None:
            row = unit.execute(_LINKS.where(identity_links.c.account == account)).first()
            if row is None:
                return None
            unit.execute(sa.delete(identity_links).where(identity_links.c.account == account))
            return _link(row)

        async with self._writing:
            gone = await self.db.write(work)
            if gone is None:
                raise UnknownAccountError(account)
            self._person.pop(account, None)
        return gone

    async def list(self) -> list[IdentityLink]:
        """Every link, by person then account (from the database)."""
        query = _LINKS.order_by(identity_links.c.person_id, identity_links.c.account)

        def work(unit: Unit) -> list[IdentityLink]:
            return [_link(r) for r in unit.execute(query)]

        return await self.db.read(work)
