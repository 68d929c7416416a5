"""One browser, one context per agent, closed after idle (seed 004 ADR-049).

Invariants:

* Playwright and Chromium start on the first call that needs them (importing this module
  imports no Playwright); when the last agent's context closes, the browser stops too.
* Every context has its own :class:`~beamclaw_tools.browser.egress.EgressGuard` as the
  proxy for all its requests (so one agent's refusals never show in another's answers);
  the guard lives and dies with the context.
* An agent's context (cookies, storage, tabs) lives until ``idle_close_seconds`` pass
  without a call, or until ``browser_close``; calls of one agent run one at a time
  (:attr:`AgentBrowser.lock`).
* Events the page causes on its own — dialogs, pop-ups, downloads, refused requests — are
  queued on the agent and reported with the next tool answer, never lost silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING

from beamclaw_tools.browser.egress import EgressGuard
from beamclaw_tools.errors import BrowserUnavailableError
from beamclaw_tools.netguard import NetworkPolicy, Resolver, system_resolver
from beamclaw_tools.settings import BrowserSettings

if TYPE_CHECKING:
    from playwright.async_api import (
        Browser,
        BrowserContext,
        Dialog,
        Download,
        Frame,
        Page,
        Playwright,
    )

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium(settings: BrowserSettings) -> str | None:
    """The Chromium executable to launch: the configured path if it exists, else the first
    of :data:`CHROMIUM_NAMES` on ``PATH``; None when there is none."""
    if settings.executable_path is not None:
        path = settings.executable_path.expanduser()
        return str(path) if path.is_file() else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class AgentBrowser:
    """One agent's context: its tabs, the refs of each tab's last snapshot, pending notes."""

    def __init__(
        self,
        context: BrowserContext,
        guard: EgressGuard,
        settings: BrowserSettings,
        downloads: Path,
    ) -> None:
        self.context = context
        self.guard = guard
        self.settings = settings
        self.downloads = downloads
        self.lock = asyncio.Lock()
        self.pages: list[Page] = []
        self.active = 0
        self.refs: dict[int, set[str]] = {}
        """``id(page)`` → refs of the last snapshot taken of that page's current document."""
        self.notes: list[str] = []
        self._pending: set[asyncio.Task[None]] = set()
        context.on("page", self._adopt)

    # --------------------------------------------------------------- tabs
    @property
    def page(self) -> Page:
        """The active tab (one is opened when there is none)."""
        return self.pages[self.active]

    async def ensure_page(self) -> Page:
        if not self.pages:
            await self.new_page()
        return self.page

    async def new_page(self) -> Page:
        """Open a tab and make it active (the "page" event may come before or after)."""
        page = await self.context.new_page()
        self._adopt(page)
        self.active = self.pages.index(page)
        self.notes = [n for n in self.notes if not n.startswith("a new tab opened")]
        return page

    def _adopt(self, page: Page) -> None:
        if page in self.pages:
            return
        if len(self.pages) >= self.settings.max_pages:
            self.notes.append(
                f"a pop-up ({page.url or 'new tab'}) was closed: at most "
                f"{self.settings.max_pages} tabs are open ([tools.browser] max_pages)"
            )
            self._spawn(page.close())
            return
        self.pages.append(page)
        if len(self.pages) > 1:
            self.active = len(self.pages) - 1
            self.notes.append(f"a new tab opened and is now active: tab {self.active}")
        page.on("dialog", self._on_dialog)
        page.on("download", self._on_download)
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))
        page.on("close", self._on_close)

    def _on_close(self, page: Page) -> None:
        if page in self.pages:
            index = self.pages.index(page)
            self.pages.remove(page)
            self.refs.pop(id(page), None)
            if self.active >= index and self.active > 0:
                self.active -= 1

    def _on_navigated(self, page: Page, frame: Frame) -> None:
        if frame == page.main_frame:
            self.refs.pop(id(page), None)

    # --------------------------------------------------------------- page events
    def _on_dialog(self, dialog: Dialog) -> None:
        accept = dialog.type == "alert"
        verb = "accepted" if accept else "dismissed"
        self.notes.append(f"a {dialog.type} dialog was {verb}: {dialog.message[:300]!r}")
        self._spawn(dialog.accept() if accept else dialog.dismiss())

    def _on_download(self, download: Download) -> None:
        self._spawn(self._save_download(download))

    async def _save_download(self, download: Download) -> None:
        from playwright.async_api import Error as PlaywrightError

        name = Path(download.suggested_filename).name or "download"
        cap = self.settings.download_max_bytes
        try:
            temp = await asyncio.wait_for(
                download.path(), timeout=self.settings.navigation_timeout_seconds
            )
        except (TimeoutError, PlaywrightError) as e:
            with contextlib.suppress(PlaywrightError):
                await download.cancel()
            self.notes.append(f"download {name!r} failed: {type(e).__name__}: {e}")
            return
        size = temp.stat().st_size
        if size > cap:
            await download.delete()
            self.notes.append(
                f"download {name!r} refused: {size:,} bytes is over the {cap:,}-byte limit "
                "([tools.browser] download_max_bytes)"
            )
            return
        try:
            self.downloads.mkdir(parents=True, exist_ok=True)
            target = _free_name(self.downloads / name)
            partial = target.with_name(target.name + ".part")
            await download.save_as(partial)
            partial.replace(target)  # atomic: a kill never leaves a half file under its name
        except (OSError, PlaywrightError) as e:
            self.notes.append(f"download {name!r} could not be saved: {e}")
            return
        self.notes.append(f"downloaded {target.name} ({size:,} bytes) to downloads/{target.name}")

    def _spawn(self, work: Awaitable[object]) -> None:
        async def run() -> None:
            from playwright.async_api import Error as PlaywrightError

            # answering a dialog of a page that closed meanwhile is not worth reporting
            with contextlib.suppress(PlaywrightError):
                await work

        task = asyncio.ensure_future(run())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def settle(self) -> None:
        """Wait for queued dialog answers and downloads to finish."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    def take_notes(self) -> list[str]:
        out, self.notes = self.notes, []
        return out

    async def close(self) -> None:
        from playwright.async_api import Error as PlaywrightError

        with contextlib.suppress(PlaywrightError):  # the browser may already be gone
            await self.context.close()
        await self.settle()
        await self.guard.close()


def _free_name(path: Path) -> Path:
    if not path.exists():
        return path
    for n in range(1, 1000):
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists():
            return candidate
    return path


class BrowserPool:
    """The process's browser and its per-agent contexts (see the module invariants)."""

    def __init__(
        self, settings: BrowserSettings, executable: str, resolver: Resolver = system_resolver
    ) -> None:
        self.settings = settings
        self.executable = executable
        self._resolver = resolver
        self._agents: dict[str, AgentBrowser] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._uses: dict[str, int] = {}
        """Uses per agent; an idle timer closes only when no use came after its own."""
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._start_lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()

    def is_open(self, agent_id: str) -> bool:
        return agent_id in self._agents

    @property
    def running(self) -> bool:
        """True while Chromium runs."""
        return self._browser is not None

    async def agent(self, agent_id: str, workspace: Path) -> AgentBrowser:
        """The agent's context (opened on first use); resets its idle timer."""
        async with self._start_lock:
            found = self._agents.get(agent_id)
            if found is None:
                browser = await self._ensure_browser()
                s = self.settings
                policy = NetworkPolicy.from_config(s.allow_private, s.allowed_hosts)
                guard = EgressGuard(policy, self._resolver)
                await guard.start()
                try:
                    context = await browser.new_context(
                        accept_downloads=True,
                        proxy={"server": guard.server, "bypass": "<-loopback>"},
                    )
                except BaseException:
                    await guard.close()
                    raise
                context.set_default_timeout(self.settings.action_timeout_seconds * 1000)
                context.set_default_navigation_timeout(
                    self.settings.navigation_timeout_seconds * 1000
                )
                downloads = workspace / "downloads"
                found = AgentBrowser(context, guard, self.settings, downloads)
                self._agents[agent_id] = found
        self.touch(agent_id)
        return found

    def touch(self, agent_id: str) -> None:
        """Note a use and restart the agent's idle timer."""
        timer = self._timers.pop(agent_id, None)
        if timer is not None:
            timer.cancel()
        uses = self._uses.get(agent_id, 0) + 1
        self._uses[agent_id] = uses
        self._timers[agent_id] = asyncio.get_running_loop().call_later(
            self.settings.idle_close_seconds, self._idle, agent_id, uses
        )

    def _idle(self, agent_id: str, uses: int) -> None:
        async def close() -> None:
            await self.close_agent(agent_id, unless_used_since=uses)

        task = asyncio.ensure_future(close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close_agent(self, agent_id: str, *, unless_used_since: int | None = None) -> bool:
        """Close the agent's context (waiting for a running call); True when one was closed.

        ``unless_used_since`` (the idle timer's use count): nothing happens when the agent
        was used after the timer started — a call in progress, or one that began meanwhile
        (each use starts its own timer)."""
        found = self._agents.get(agent_id)
        if found is None:
            return False
        async with found.lock:
            if unless_used_since is not None and self._uses.get(agent_id) != unless_used_since:
                return False
            timer = self._timers.pop(agent_id, None)
            if timer is not None:
                timer.cancel()
            if self._agents.get(agent_id) is not found:
                return False
            del self._agents[agent_id]
            self._uses.pop(agent_id, None)
            await found.close()
        async with self._start_lock:
            if not self._agents:
                await self._stop_browser()
        return True

    async def close(self) -> None:
        """Close every context (and its guard), the browser and Playwright."""
        for agent_id in list(self._agents):
            await self.close_agent(agent_id)
        async with self._start_lock:
            await self._stop_browser()

    async def _ensure_browser(self) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        await self._stop_browser()
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        s = self.settings
        playwright = await async_playwright().start()
        try:
            browser = await playwright.chromium.launch(
                executable_path=self.executable,
                headless=s.headless,
                args=list(s.launch_args),
            )
        except PlaywrightError as e:
            await playwright.stop()
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise BrowserUnavailableError(
                f"could not launch Chromium at {self.executable}: {first}"
            ) from e
        self._playwright, self._browser = playwright, browser
        return browser

    async def _stop_browser(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        if playwright is None:
            return  # never started: a shutdown does not import Playwright
        from playwright.async_api import Error as PlaywrightError

        if browser is not None:
            with contextlib.suppress(PlaywrightError):  # it may have crashed
                await browser.close()
        await playwright.stop()


__all__ = ["CHROMIUM_NAMES", "AgentBrowser", "BrowserPool", "find_chromium"]
