"""``/api/pairing/telegram``: who may talk to the Telegram bot (``dm_policy = "pairing"``).

A stranger who writes to the bot gets a code; approving it (``beamclaw pair telegram
CODE``) lets that Telegram user in, links the account ``tg:<user id>`` to a person when
one is named (one history across channels), optionally fixes the agent that answers it,
and tells the user on Telegram. These routes act on the running channel (409 when the
Telegram channel is not running here); the CLI works on the database directly when no
gateway holds the home.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, Field

from beamclaw_core import IdentityError
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of
from beamclaw_gateway.telegram.errors import NotApprovedError, UnknownPairingCodeError

if TYPE_CHECKING:
    from beamclaw_gateway.telegram import TelegramChannel

router = APIRouter(prefix="/api", tags=["api"], dependencies=[Depends(require_token)])


class ApproveRequest(BaseModel):
    code: str = Field(min_length=4, max_length=32)
    person: str | None = Field(default=None, min_length=1, max_length=256)
    """Link the Telegram account to this person (created when new)."""
    agent: str | None = Field(default=None, min_length=1, max_length=128)
    """The agent that answers this user (None: the channel's)."""


class PendingOut(BaseModel):
    code: str
    user_id: int
    username: str | None
    name: str | None
    created_at: float
    expires_at: float


class ApprovedOut(BaseModel):
    user_id: int
    username: str | None
    person: str | None
    agent: str | None
    approved_at: float


class PairingList(BaseModel):
    pending: list[PendingOut]
    approved: list[ApprovedOut]


class Revoked(BaseModel):
    removed: str
    """``approved`` (the user is no longer let in) or ``pending`` (the code is gone)."""


def _channel(request: Request) -> TelegramChannel:
    channel = services_of(request).telegram
    if channel is None or not channel.ready.is_set():
        raise ApiError(409, "the Telegram channel is not running", code="channel_not_running")
    return channel


@router.get(
    "/pairing/telegram", response_model=PairingList, responses=error_responses(401, 409, 429)
)
async def list_pairings(request: Request) -> PairingList:
    """Pending codes and approved users."""
    store = _channel(request).pairing
    return PairingList(
        pending=[
            PendingOut(
                code=p.code,
                user_id=p.user_id,
                username=p.username,
                name=p.name,
                created_at=p.created_at,
                expires_at=p.expires_at,
            )
            for p in await store.pending()
        ],
        approved=[
            ApprovedOut(
                user_id=u.user_id,
                username=u.username,
                person=u.person,
                agent=u.agent,
                approved_at=u.approved_at,
            )
            for u in store.approved_users()
        ],
    )


@router.post(
    "/pairing/telegram",
    response_model=PendingOut,
    responses=error_responses(401, 404, 409, 422, 429),
)
async def approve(request: Request, body: ApproveRequest) -> PendingOut:
    """Approve a pairing code: its Telegram user is let in (and told so)."""
    channel = _channel(request)
    if body.agent is not None and services_of(request).agents.resolve(body.agent) is None:
        raise ApiError(404, f"no agent {body.agent!r}", code="unknown_agent")
    try:
        made = await channel.approve_pairing(body.code, body.person, body.agent)
    except UnknownPairingCodeError as exc:
        raise ApiError(404, str(exc), code="unknown_code") from exc
    except IdentityError as exc:
        raise ApiError(409, str(exc), code="identity_conflict") from exc
    return PendingOut(
        code=made.code,
        user_id=made.user_id,
        username=made.username,
        name=made.name,
        created_at=made.created_at,
        expires_at=made.expires_at,
    )


@router.delete(
    "/pairing/telegram/{who}", response_model=Revoked, responses=error_responses(401, 404, 409, 429)
)
async def revoke(
    request: Request,
    who: str = Path(min_length=1, max_length=64, description="User id, @username or code."),
) -> Revoked:
    """Stop answering a Telegram user, or drop a pending code."""
    try:
        removed = await _channel(request).pairing.revoke(who)
    except NotApprovedError as exc:
        raise ApiError(404, str(exc), code="not_approved") from exc
    return Revoked(removed=removed)
