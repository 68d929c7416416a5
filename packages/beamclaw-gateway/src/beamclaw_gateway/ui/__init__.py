"""The web page (``GET /ui/``): static files and the headers they are served with."""

from __future__ import annotations

from beamclaw_gateway.ui.routes import CONTENT_SECURITY_POLICY, UI_HEADERS, router

__all__ = ["CONTENT_SECURITY_POLICY", "UI_HEADERS", "router"]
