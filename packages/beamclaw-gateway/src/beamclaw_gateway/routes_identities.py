"""``/api/identities``: channel accounts linked to persons (one person across channels).

Linking ``api:ann`` and ``local:ann`` to ``ann`` makes the API and the TUI talk to the same
sessions (``[core] session_sharing = "shared"``). A link that would merge two people's
histories is refused with 409 (see :mod:`beamclaw_core.identities`).
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, Field

from beamclaw_core import IdentityConflictError, IdentityError, IdentityLink, UnknownAccountError
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of

router = APIRouter(prefix="/api", tags=["api"], dependencies=[Depends(require_token)])

Account = Path(min_length=1, max_length=256, description="A channel account (api:ann, tg:123).")


class LinkRequest(BaseModel):
    account: str = Field(min_length=1, max_length=256)
    """The channel account (``api:ann``, ``local:ann``, ``ws:ann``, ``tg:123``)."""
    person: str = Field(min_length=1, max_length=256)
    """The person it speaks for (created when new)."""


class LinkOut(BaseModel):
    account: str
    person: str
    session_key: str
    """The user id the person's sessions are keyed by."""
    linked_at: float

    @classmethod
    def of(cls, link: IdentityLink) -> LinkOut:
        return cls(
            account=link.account,
            person=link.person_id,
            session_key=link.session_key,
            linked_at=link.linked_at,
        )


class LinkList(BaseModel):
    links: list[LinkOut]


@router.get("/identities", response_model=LinkList, responses=error_responses(401, 429))
async def list_links(request: Request) -> LinkList:
    """Every linked account, by person."""
    links = await services_of(request).core().identities.list()
    return LinkList(links=[LinkOut.of(link) for link in links])


@router.post("/identities", response_model=LinkOut, responses=error_responses(401, 409, 422, 429))
async def link(request: Request, body: LinkRequest) -> LinkOut:
    """Link an account to a person: its messages go to the person's sessions from now on."""
    try:
        made = await services_of(request).core().identities.link(body.account, body.person)
    except IdentityConflictError as exc:
        raise ApiError(409, str(exc), code="identity_conflict") from exc
    except IdentityError as exc:
        raise ApiError(422, str(exc), code="invalid_identity") from exc
    return LinkOut.of(made)


@router.delete(
    "/identities/{account}", response_model=LinkOut, responses=error_responses(401, 404, 429)
)
async def unlink(request: Request, account: str = Account) -> LinkOut:
    """The account speaks for itself again (the person keeps the history)."""
    try:
        gone = await services_of(request).core().identities.unlink(account)
    except UnknownAccountError as exc:
        raise ApiError(404, str(exc), code="account_not_linked") from exc
    return LinkOut.of(gone)
