"""What every browser tool shares: resolving refs, refusing form submission, the answer.

Invariants:

* a ref resolves only when it is in the last snapshot taken of the active tab's current
  document *and* still matches an element; otherwise :class:`StaleRefError` asks the
  model for a new snapshot (a ref from an earlier page never hits a new page's element);
* :func:`answer` takes a fresh snapshot after every action, records its refs, and puts the
  page's own events (dialogs, pop-ups, downloads, refused requests) above it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from beamclaw_tools.browser.pool import AgentBrowser, BrowserPool
from beamclaw_tools.browser.snapshot import parse_snapshot, refs_of, trimmed_snapshot
from beamclaw_tools.errors import BrowserError, StaleRefError

if TYPE_CHECKING:
    from playwright.async_api import Locator

SUBMITS_JS = """el => {
  const b = el.closest('button, input');
  if (!b || !b.form) return false;
  const t = (b.getAttribute('type') || (b.tagName === 'BUTTON' ? 'submit' : 'text')).toLowerCase();
  return t === 'submit' || t === 'image';
}"""
"""True when clicking the element submits a form."""

ENTER_SUBMITS_JS = """el => {
  const e = el || document.activeElement;
  if (!e || !(e.form || e.closest('form'))) return false;
  return e.tagName !== 'TEXTAREA' && !e.isContentEditable;
}"""
"""True when Enter on the element (or the focused one) would submit its form."""

SUBMIT_HINT = "submitting a form needs browser_submit (which asks for approval)"


async def locate(agent: AgentBrowser, ref: str) -> Locator:
    """The element ``ref`` names on the active tab, or :class:`StaleRefError`."""
    page = agent.page if agent.pages else None
    if page is None or ref not in agent.refs.get(id(page), set()):
        raise StaleRefError(ref)
    locator = page.get_by_ref(ref)
    if await locator.count() == 0:
        raise StaleRefError(ref)
    return locator


async def refuse_submitting(locator: Locator, action: str) -> None:
    """Raise when ``action`` on the element would submit its form."""
    if await locator.evaluate(SUBMITS_JS):
        raise BrowserError(f"{action} refused: this element submits a form; {SUBMIT_HINT}")


async def settle(agent: AgentBrowser, limit_seconds: float) -> None:
    """Let the page finish what the action started (load, dialogs, downloads), bounded."""
    await asyncio.sleep(0.05)  # events the action fired (pop-ups, dialogs) reach handlers
    page = agent.page if agent.pages else None
    if page is not None:
        from playwright.async_api import Error as PlaywrightError

        # the answer shows the page as it is; a slow page is not an error here
        with contextlib.suppress(PlaywrightError):
            await page.wait_for_load_state("domcontentloaded", timeout=limit_seconds * 1000)
    try:
        await asyncio.wait_for(agent.settle(), limit_seconds)
    except TimeoutError:
        agent.notes.append("a download is still running; its result comes with a later answer")


async def answer(
    agent: AgentBrowser, pool: BrowserPool, lead: str = "", *, full: bool = False
) -> str:
    """The page's state after an action: header, notes, then the (trimmed) snapshot."""
    lines = [lead] if lead else []
    if not agent.pages:
        lines.append("No tab is open (browser_navigate opens one).")
        lines.extend(f"Note: {n}" for n in agent.take_notes())
        return "\n".join(lines)
    page = agent.page
    title = await page.title()
    lines.append(f"Page: {page.url}" + (f" — {title}" if title else ""))
    if len(agent.pages) > 1:
        lines.append(f"Tab {agent.active} of {len(agent.pages)} (browser_tabs lists them)")
    lines.extend(f"Note: {n}" for n in agent.take_notes())
    lines.extend(f"Note: {r}" for r in agent.guard.take_refusals())
    raw = await page.aria_snapshot(mode="ai")
    agent.refs[id(page)] = refs_of(parse_snapshot(raw))
    max_chars = pool.settings.snapshot_max_chars
    snapshot = raw if full else trimmed_snapshot(raw, max_chars)
    lines.append("Snapshot:" if snapshot else "Snapshot: (empty page)")
    if snapshot:
        lines.append(snapshot)
    return "\n".join(lines)


__all__ = [
    "ENTER_SUBMITS_JS",
    "SUBMITS_JS",
    "SUBMIT_HINT",
    "answer",
    "locate",
    "refuse_submitting",
    "settle",
]
