"""The browser tools: Playwright over a system Chromium (seed 004 ADR-048/049/051/052).

:func:`open_browser_pool` decides whether the tools are offered (``[tools.browser]
enabled`` and a Chromium found); :func:`browser_tools` builds them over the pool; the
composition root registers them and closes the pool at shutdown. Importing this package
imports no Playwright: the first tool call starts it.
"""

from __future__ import annotations

from beamclaw_tools.browser.egress import REFUSED_HEADER, EgressGuard
from beamclaw_tools.browser.pool import CHROMIUM_NAMES, AgentBrowser, BrowserPool, find_chromium
from beamclaw_tools.browser.snapshot import (
    AriaNode,
    parse_snapshot,
    refs_of,
    render,
    trim,
    trimmed_snapshot,
)
from beamclaw_tools.browser.tools import browser_tools
from beamclaw_tools.netguard import Resolver, system_resolver
from beamclaw_tools.settings import BrowserSettings


def open_browser_pool(
    settings: BrowserSettings, resolver: Resolver = system_resolver
) -> BrowserPool | None:
    """A pool (nothing launched yet), or None when disabled or no Chromium is found."""
    if not settings.enabled:
        return None
    executable = find_chromium(settings)
    if executable is None:
        return None
    return BrowserPool(settings, executable, resolver)


__all__ = [
    "CHROMIUM_NAMES",
    "REFUSED_HEADER",
    "AgentBrowser",
    "AriaNode",
    "BrowserPool",
    "EgressGuard",
    "browser_tools",
    "find_chromium",
    "open_browser_pool",
    "parse_snapshot",
    "refs_of",
    "render",
    "trim",
    "trimmed_snapshot",
]
