"""Read-only integrations: Gmail, Google Calendar, Notion and Slack as native tools.

Build one :class:`Integrations` from ``[tools.integrations]`` and register its
:meth:`~Integrations.tools`; the gateway hosts the Google OAuth callback
(:meth:`Integrations.complete_google`) and ``beamclaw integrations`` lists, connects and
revokes. Tokens live encrypted under the BeamClaw home and are known to the scrubber.
Fake servers for tests: :mod:`beamclaw_tools.integrations.testing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_tools.integrations.errors import (
        BadResponseError,
        IntegrationError,
        NotConnectedError,
        OAuthError,
        RateLimitedError,
        ReconnectRequiredError,
        ServiceError,
        TokenStoreError,
    )
    from beamclaw_tools.integrations.hub import Connection, Integrations, Revocation
    from beamclaw_tools.integrations.oauth import CALLBACK_PATH, GOOGLE_SCOPES
    from beamclaw_tools.integrations.settings import (
        GoogleSettings,
        IntegrationsSettings,
        NotionSettings,
        SlackSettings,
    )
    from beamclaw_tools.integrations.token_store import TokenStore
    from beamclaw_tools.integrations.tokens import SERVICES, Service, StoredToken, service_named
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_tools.integrations.errors": (
                "BadResponseError",
                "IntegrationError",
                "NotConnectedError",
                "OAuthError",
                "RateLimitedError",
                "ReconnectRequiredError",
                "ServiceError",
                "TokenStoreError",
            ),
            "beamclaw_tools.integrations.hub": (
                "Connection",
                "Integrations",
                "Revocation",
            ),
            "beamclaw_tools.integrations.oauth": (
                "CALLBACK_PATH",
                "GOOGLE_SCOPES",
            ),
            "beamclaw_tools.integrations.settings": (
                "GoogleSettings",
                "IntegrationsSettings",
                "NotionSettings",
                "SlackSettings",
            ),
            "beamclaw_tools.integrations.token_store": ("TokenStore",),
            "beamclaw_tools.integrations.tokens": (
                "SERVICES",
                "Service",
                "StoredToken",
                "service_named",
            ),
        },
    )

__all__ = [
    "CALLBACK_PATH",
    "GOOGLE_SCOPES",
    "SERVICES",
    "BadResponseError",
    "Connection",
    "GoogleSettings",
    "IntegrationError",
    "Integrations",
    "IntegrationsSettings",
    "NotConnectedError",
    "NotionSettings",
    "OAuthError",
    "RateLimitedError",
    "ReconnectRequiredError",
    "Revocation",
    "Service",
    "ServiceError",
    "SlackSettings",
    "StoredToken",
    "TokenStore",
    "TokenStoreError",
    "service_named",
]
