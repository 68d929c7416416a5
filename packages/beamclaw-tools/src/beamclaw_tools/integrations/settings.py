"""The ``[tools.integrations]`` configuration section.

Nothing is offered until ``enabled = true``. Google needs an OAuth client (a "Web
application" client whose redirect URI is ``<redirect_base_url>/integrations/google/callback``);
Notion and Slack need nothing here (their tokens are pasted). Example::

    [tools.integrations]
    enabled = true
    redirect_base_url = "https://agent.example.org"
    [tools.integrations.google]
    client_id = "1234.apps.googleusercontent.com"
    client_secret = { env = "GOOGLE_CLIENT_SECRET" }
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from beamclaw_obs import Secret, Section


class GoogleSettings(Section):
    """``[tools.integrations.google]``: one OAuth consent for Gmail + Calendar (read-only)."""

    client_id: str | None = None
    """OAuth client id; without it Google cannot be connected."""
    client_secret: Secret | None = None
    """OAuth client secret (``{ env = "GOOGLE_CLIENT_SECRET" }``)."""
    auth_url: str = "https://accounts.google.com/o/oauth2/v2/auth"
    """Authorisation endpoint the person opens."""
    token_url: str = "https://oauth2.googleapis.com/token"  # noqa: S105 - a URL, not a password
    """Token endpoint (code exchange and refresh)."""
    revoke_url: str = "https://oauth2.googleapis.com/revoke"
    """Revocation endpoint (``beamclaw integrations revoke google``)."""
    gmail_base_url: str = "https://gmail.googleapis.com/gmail/v1"
    """Gmail API base."""
    calendar_base_url: str = "https://www.googleapis.com/calendar/v3"
    """Calendar API base."""


class NotionSettings(Section):
    """``[tools.integrations.notion]``: an internal integration token, pasted."""

    base_url: str = "https://api.notion.com/v1"
    """Notion API base."""
    api_version: str = "2022-06-28"
    """``Notion-Version`` header sent with every request."""


class SlackSettings(Section):
    """``[tools.integrations.slack]``: a user token (``xoxp-``), pasted."""

    base_url: str = "https://slack.com/api"
    """Slack Web API base."""


class IntegrationsSettings(Section):
    """``[tools.integrations]``: read-only Gmail, Calendar, Notion and Slack tools."""

    enabled: bool = False
    """Offer the integration tools (and the Google OAuth callback route)."""
    redirect_base_url: str = "http://127.0.0.1:18800"
    """The gateway's URL as the person's browser reaches it; the Google callback is
    ``<this>/integrations/google/callback``."""
    token_store: Path | None = None
    """Encrypted token file; default ``$BEAMCLAW_HOME/integrations/tokens.enc``."""
    key_file: Path | None = None
    """Its key (created 0600 on first use); default ``$BEAMCLAW_HOME/secrets/integrations.key``."""
    refresh_margin_seconds: float = Field(default=300.0, ge=0)
    """An access token expiring within this margin is refreshed before use."""
    pending_ttl_seconds: float = Field(default=900.0, gt=0)
    """How long an authorisation link stays valid."""
    timeout_seconds: float = Field(default=20.0, gt=0)
    """Timeout of each API request."""
    max_retries: int = Field(default=2, ge=0, le=10)
    """Retries of a request answered 429 (each after its Retry-After)."""
    max_retry_after_seconds: float = Field(default=30.0, ge=0)
    """A Retry-After longer than this is not waited for: the tool says so at once."""
    page_size: int = Field(default=10, ge=1, le=100)
    """Default results per page (the model may ask for fewer or up to ``max_page_size``)."""
    max_page_size: int = Field(default=50, ge=1, le=100)
    """Upper bound on results per page."""
    max_body_chars: int = Field(default=6000, ge=200)
    """Characters of a mail body, event description or page kept in one answer."""
    google: GoogleSettings = Field(default_factory=GoogleSettings)
    notion: NotionSettings = Field(default_factory=NotionSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
