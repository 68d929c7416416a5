"""Test doubles for the integrations: one fake server speaking Google OAuth, Gmail,
Calendar, Notion and Slack over real HTTP (see :mod:`.server`)."""

from __future__ import annotations

from beamclaw_tools.integrations.testing.fixtures import (
    NOTION_DATABASE_ID,
    NOTION_PAGE_ID,
    FakeData,
    GoogleState,
)
from beamclaw_tools.integrations.testing.server import FakeFault, FakeIntegrationsServer, Recorded

__all__ = [
    "NOTION_DATABASE_ID",
    "NOTION_PAGE_ID",
    "FakeData",
    "FakeFault",
    "FakeIntegrationsServer",
    "GoogleState",
    "Recorded",
]
