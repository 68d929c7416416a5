"""What the token store holds: stored tokens and pending authorisations (frozen values).

Invariant: ``repr`` never shows a token (pydantic ``SecretStr``); only the token store
and the API client ever call ``get_secret_value``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, SecretStr

Service = Literal["google", "notion", "slack"]
SERVICES: tuple[Service, ...] = ("google", "notion", "slack")

ALIASES: dict[str, Service] = {
    "google": "google",
    "gmail": "google",
    "mail": "google",
    "email": "google",
    "calendar": "google",
    "gcal": "google",
    "google_calendar": "google",
    "notion": "notion",
    "slack": "slack",
}
"""What a person may call a service ("connect my calendar" → google)."""


def service_named(name: str) -> Service | None:
    """The service a name refers to, or None."""
    return ALIASES.get(name.strip().lower().replace(" ", "_").replace("-", "_"))


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StoredToken(_Frozen):
    """One service's credentials. ``expires_at`` (epoch seconds) is None when they never
    expire (Notion and Slack tokens)."""

    service: Service
    access_token: SecretStr
    refresh_token: SecretStr | None = None
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()
    obtained_at: float
    account: str | None = None
    """Who the token belongs to, when the service says (a workspace or user name)."""


class PendingAuthorisation(_Frozen):
    """A link handed out and not yet used (keyed by its ``state``): Google's
    authorisation (with its PKCE verifier and redirect URI) or a paste form (neither)."""

    service: Service
    created_at: float
    verifier: SecretStr | None = None
    redirect_uri: str | None = None
