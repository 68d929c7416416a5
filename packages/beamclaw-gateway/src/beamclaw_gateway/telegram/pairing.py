"""Pairing codes and approved Telegram users, persisted (``telegram_pairings``,
``telegram_access``).

Invariants: a code is 8 characters from an alphabet without look-alikes (no 0/O, 1/I/L);
it lives one hour; one user has at most one pending code (asking again gives the same
one while it lives); at most :data:`MAX_PENDING` codes are pending at once (a flood of
strangers cannot fill the table). Approving a code removes it and lets its user in
(``telegram_access``) in one unit. The approved set is mirrored in memory (loaded at
start, changed after each commit) so checking a sender costs a set lookup.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa

from beamclaw_gateway.tables import telegram_access, telegram_pairings
from beamclaw_gateway.telegram.errors import NotApprovedError, UnknownPairingCodeError
from beamclaw_memory import Database, Unit

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
"""No 0/O, 1/I/L: a code read aloud or off a phone is typed right."""
CODE_LENGTH = 8
TTL_SECONDS = 3600.0
MAX_PENDING = 3


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(code: str) -> str:
    return code.strip().upper().replace("-", "").replace(" ", "")


@dataclass(frozen=True, slots=True)
class PairingRequest:
    code: str
    user_id: int
    chat_id: int
    username: str | None
    name: str | None
    created_at: float
    expires_at: float


@dataclass(frozen=True, slots=True)
class ApprovedUser:
    user_id: int
    chat_id: int | None
    username: str | None
    person: str | None
    agent: str | None
    approved_at: float


def _request(row: sa.Row[tuple[object, ...]]) -> PairingRequest:
    m = row._mapping  # pyright: ignore[reportPrivateUsage]
    return PairingRequest(
        str(m["code"]),
        int(m["user_id"]),  # pyright: ignore[reportArgumentType]
        int(m["chat_id"]),  # pyright: ignore[reportArgumentType]
        m["username"],  # pyright: ignore[reportArgumentType]
        m["name"],  # pyright: ignore[reportArgumentType]
        float(m["created_at"]),  # pyright: ignore[reportArgumentType]
        float(m["expires_at"]),  # pyright: ignore[reportArgumentType]
    )


def _approved(row: sa.Row[tuple[object, ...]]) -> ApprovedUser:
    m = row._mapping  # pyright: ignore[reportPrivateUsage]
    return ApprovedUser(
        int(m["user_id"]),  # pyright: ignore[reportArgumentType]
        m["chat_id"],  # pyright: ignore[reportArgumentType]
        m["username"],  # pyright: ignore[reportArgumentType]
        m["person"],  # pyright: ignore[reportArgumentType]
        m["agent"],  # pyright: ignore[reportArgumentType]
        float(m["approved_at"]),  # pyright: ignore[reportArgumentType]
    )


class PairingStore:
    """Pending codes and approved users (see the module invariants)."""

    def __init__(self, db: Database, clock: Callable[[], float]) -> None:
        self.db = db
        self._clock = clock
        self._approved: dict[int, ApprovedUser] = {}
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        def work(unit: Unit) -> dict[int, ApprovedUser]:
            rows = unit.execute(sa.select(telegram_access))
            return {u.user_id: u for u in map(_approved, rows)}

        self._approved = await self.db.read(work)

    def approved(self, user_id: int) -> ApprovedUser | None:
        return self._approved.get(user_id)

    def approved_users(self) -> list[ApprovedUser]:
        return sorted(self._approved.values(), key=lambda u: u.approved_at)

    async def request(
        self, user_id: int, chat_id: int, username: str | None, name: str | None
    ) -> PairingRequest | None:
        """The user's pending code (a new one when none lives); None when
        :data:`MAX_PENDING` other codes are pending."""
        now = self._clock()

        def work(unit: Unit) -> PairingRequest | None:
            unit.execute(sa.delete(telegram_pairings).where(telegram_pairings.c.expires_at <= now))
            mine = unit.execute(
                sa.select(telegram_pairings).where(telegram_pairings.c.user_id == user_id)
            ).first()
            if mine is not None:
                return _request(mine)
            count = unit.execute(sa.select(sa.func.count()).select_from(telegram_pairings))
            if int(count.scalar_one()) >= MAX_PENDING:
                return None
            made = PairingRequest(
                new_code(), user_id, chat_id, username, name, now, now + TTL_SECONDS
            )
            unit.execute(
                sa.insert(telegram_pairings).values(
                    code=made.code,
                    user_id=user_id,
                    chat_id=chat_id,
                    username=username,
                    name=name,
                    created_at=now,
                    expires_at=made.expires_at,
                )
            )
            return made

        async with self._lock:
            return await self.db.write(work)

    async def pending(self) -> list[PairingRequest]:
        now = self._clock()

        def work(unit: Unit) -> list[PairingRequest]:
            rows = unit.execute(
                sa.select(telegram_pairings)
                .where(telegram_pairings.c.expires_at > now)
                .order_by(telegram_pairings.c.created_at)
            )
            return [_request(r) for r in rows]

        return await self.db.read(work)

    async def approve(
        self, code: str, person: str | None, agent: str | None
    ) -> tuple[PairingRequest, ApprovedUser]:
        """Let the code's user in; :class:`UnknownPairingCodeError` when no live code."""
        code = normalise_code(code)
        now = self._clock()

        def work(unit: Unit) -> tuple[PairingRequest, ApprovedUser]:
            row = unit.execute(
                sa.select(telegram_pairings).where(
                    telegram_pairings.c.code == code, telegram_pairings.c.expires_at > now
                )
            ).first()
            if row is None:
                raise UnknownPairingCodeError(code)
            req = _request(row)
            unit.execute(sa.delete(telegram_pairings).where(telegram_pairings.c.code == code))
            unit.execute(sa.delete(telegram_access).where(telegram_access.c.user_id == req.user_id))
            user = ApprovedUser(req.user_id, req.chat_id, req.username, person, agent, now)
            unit.execute(
                sa.insert(telegram_access).values(
                    user_id=user.user_id,
                    chat_id=user.chat_id,
                    username=user.username,
                    person=person,
                    agent=agent,
                    approved_at=now,
                )
            )
            return req, user

        async with self._lock:
            req, user = await self.db.write(work)
            self._approved[user.user_id] = user
        return req, user

    async def revoke(self, who: str) -> str:
        """Remove an approved user or a pending code (a user id, ``@username`` or code);
        returns what was removed (``approved`` or ``pending``)."""
        key = who.strip()
        user_id = int(key) if key.lstrip("-").isdigit() else None
        username = key[1:].lower() if key.startswith("@") else None
        code = normalise_code(key)

        def work(unit: Unit) -> tuple[str, int | None]:
            access = telegram_access.c
            if user_id is not None:
                match = access.user_id == user_id
            elif username is not None:
                match = sa.func.lower(access.username) == username
            else:
                match = sa.false()
            found = unit.execute(sa.select(access.user_id).where(match)).first()
            if found is not None:
                unit.execute(sa.delete(telegram_access).where(access.user_id == found.user_id))
                return "approved", int(found.user_id)
            pairs = telegram_pairings.c
            pmatch = pairs.code == code
            if user_id is not None:
                pmatch = sa.or_(pmatch, pairs.user_id == user_id)
            if username is not None:
                pmatch = sa.or_(pmatch, sa.func.lower(pairs.username) == username)
            gone = unit.execute(sa.delete(telegram_pairings).where(pmatch)).rowcount
            if gone:
                return "pending", None
            raise NotApprovedError(who)

        async with self._lock:
            kind, removed = await self.db.write(work)
            if removed is not None:
                self._approved.pop(removed, None)
        return kind
