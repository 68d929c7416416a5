"""The ``browser_*`` tools: thin shells over :mod:`~beamclaw_tools.browser.actions`.

Every tool runs under its agent's lock, answers with a fresh accessibility snapshot (except
``browser_close`` and ``browser_screenshot``), and turns Playwright's timeouts and errors
into tool errors that say what to do next. Reading tools (navigate, snapshot, screenshot,
back, tabs, wait, close) run at any autonomy; tools that change a page's inputs need
``supervised``; ``browser_submit`` — the only way to submit a form — asks for approval.
"""

from __future__ import annotations

import asyncio
import base64
from abc import abstractmethod
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel, Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.browser.actions import (
    ENTER_SUBMITS_JS,
    SUBMIT_HINT,
    answer,
    locate,
    refuse_submitting,
    settle,
)
from beamclaw_tools.browser.egress import REFUSED_HEADER
from beamclaw_tools.browser.pool import AgentBrowser, BrowserPool
from beamclaw_tools.errors import BrowserError, InvalidAgentIdError
from beamclaw_tools.paths import session_workspace
from beamclaw_tools.types import Autonomy, ImagePart, SessionRef, Tool, ToolOutput

if TYPE_CHECKING:
    from playwright.async_api import Page

A = TypeVar("A", bound=BaseModel)

Ref = Field(min_length=1, max_length=40, description="Element ref from the last snapshot (e5).")


class BrowserTool(TypedTool[A]):
    """Runs :meth:`act` on the calling agent's browser; errors become tool errors."""

    def __init__(
        self,
        pool: BrowserPool,
        args_model: type[A],
        name: str,
        description: str,
        *,
        min_autonomy: Autonomy = Autonomy.READ_ONLY,
        requires_approval: bool = False,
    ) -> None:
        self.pool = pool
        s = pool.settings
        super().__init__(
            args_model,
            make_definition(
                name,
                description,
                args_model,
                requires_approval=requires_approval,
                min_autonomy=min_autonomy,
                timeout_seconds=s.navigation_timeout_seconds + 2 * s.action_timeout_seconds + 10,
            ),
        )

    async def run(self, args: A, session: SessionRef) -> ToolOutput:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeoutError

        name = self.definition.name
        try:
            agent = await self.pool.agent(session.agent_id, session_workspace(session))
            async with agent.lock:
                try:
                    return await self.act(agent, args)
                finally:
                    self.pool.touch(session.agent_id)
        except (BrowserError, InvalidAgentIdError) as e:
            return ToolOutput.error(str(e))
        except PlaywrightTimeoutError as e:
            return ToolOutput.error(f"{name} timed out: {_first_line(e)}{_TIMEOUT_HINT}")
        except PlaywrightError as e:
            return ToolOutput.error(f"{name} failed: {_first_line(e)}")

    @abstractmethod
    async def act(self, agent: AgentBrowser, args: A) -> ToolOutput:
        """Do the action on ``agent`` (its lock held)."""

    async def snapshot_answer(self, agent: AgentBrowser, lead: str = "") -> ToolOutput:
        await settle(agent, self.pool.settings.action_timeout_seconds)
        return ToolOutput.ok(await answer(agent, self.pool, lead))


_TIMEOUT_HINT = (
    "\nThe page may still be loading or the element may be hidden or disabled; "
    "browser_snapshot shows what is there now."
)


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


async def _page(agent: AgentBrowser) -> Page:
    return await agent.ensure_page()


# ------------------------------------------------------------------ navigation
class NavigateArgs(ToolArgs):
    url: str = Field(min_length=1, description="http:// or https:// URL to open in the tab.")


class NavigateTool(BrowserTool[NavigateArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            NavigateArgs,
            "browser_navigate",
            "Open a URL in the browser's active tab; answers with the page's accessibility "
            "snapshot (elements carry refs like [ref=e5] for the other browser_* tools).",
        )

    async def act(self, agent: AgentBrowser, args: NavigateArgs) -> ToolOutput:
        if not args.url.lower().startswith(("http://", "https://")):
            return ToolOutput.error(f"only http:// and https:// URLs can be opened: {args.url}")
        page = await _page(agent)
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeoutError

        try:
            response = await page.goto(args.url, wait_until="domcontentloaded")
        except PlaywrightTimeoutError:
            secs = self.pool.settings.navigation_timeout_seconds
            return ToolOutput.error(
                f"{args.url} did not finish loading within {secs:g} seconds "
                "([tools.browser] navigation_timeout_seconds); browser_snapshot shows what "
                "arrived, or try again later"
            )
        except PlaywrightError:
            refused = agent.guard.take_refusals()
            if refused:  # an https target refused at CONNECT fails the navigation itself
                return ToolOutput.error(_REFUSED + "\n".join(refused))
            raise
        if response is not None and response.headers.get(REFUSED_HEADER.lower()):
            return ToolOutput.error(_REFUSED + "\n".join(agent.guard.take_refusals()))
        lead = ""
        if response is not None and response.status >= 400:
            lead = f"HTTP {response.status} {response.status_text}".strip()
        return await self.snapshot_answer(agent, lead)


_REFUSED = "navigation refused by the private-address rules ([tools.browser] allow_private):\n"


class BackTool(BrowserTool[ToolArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(pool, ToolArgs, "browser_back", "Go back to the previous page.")

    async def act(self, agent: AgentBrowser, args: ToolArgs) -> ToolOutput:
        page = await _page(agent)
        response = await page.go_back(wait_until="domcontentloaded")
        lead = "" if response is not None else "There is no previous page in this tab."
        return await self.snapshot_answer(agent, lead)


class SnapshotArgs(ToolArgs):
    full: bool = Field(
        default=False, description="The untrimmed snapshot (long; only when trimming hid it)."
    )


class SnapshotTool(BrowserTool[SnapshotArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            SnapshotArgs,
            "browser_snapshot",
            "The active tab's accessibility snapshot with fresh element refs "
            f"(trimmed to {pool.settings.snapshot_max_chars} characters unless full=true).",
        )

    async def act(self, agent: AgentBrowser, args: SnapshotArgs) -> ToolOutput:
        await _page(agent)
        return ToolOutput.ok(await answer(agent, self.pool, full=args.full))


# ------------------------------------------------------------------ input
class ClickArgs(ToolArgs):
    ref: str = Ref


_OPENS_TAB_JS = """el => {
  const a = el.closest('a[href]');
  return !!(a && a.target && a.target !== '_self' && a.target !== '_top' && a.target !== '_parent');
}"""


class ClickTool(BrowserTool[ClickArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            ClickArgs,
            "browser_click",
            f"Click an element by ref (links, buttons, checkboxes, tabs…); {SUBMIT_HINT}.",
            min_autonomy=Autonomy.SUPERVISED,
        )

    async def act(self, agent: AgentBrowser, args: ClickArgs) -> ToolOutput:
        locator = await locate(agent, args.ref)
        await refuse_submitting(locator, "click")
        if await locator.evaluate(_OPENS_TAB_JS):
            # wait for the new tab, so this answer already shows it
            async with agent.context.expect_page():
                await locator.click()
        else:
            await locator.click()
        return await self.snapshot_answer(agent)


class TypeArgs(ToolArgs):
    ref: str = Ref
    text: str = Field(max_length=20_000, description="Text that replaces the field's value.")


class TypeTool(BrowserTool[TypeArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            TypeArgs,
            "browser_type",
            "Type text into an editable element by ref (its value is replaced).",
            min_autonomy=Autonomy.SUPERVISED,
        )

    async def act(self, agent: AgentBrowser, args: TypeArgs) -> ToolOutput:
        locator = await locate(agent, args.ref)
        await locator.fill(args.text)
        return await self.snapshot_answer(agent)


class FormField(ToolArgs):
    ref: str = Ref
    value: str = Field(
        max_length=20_000,
        description="Text for text fields; option label or value for selects; "
        "true/false for checkboxes and radio buttons.",
    )


class FillFormArgs(ToolArgs):
    fields: list[FormField] = Field(min_length=1, max_length=50)


_KIND_JS = """el => {
  const t = (el.getAttribute('type') || '').toLowerCase();
  if (el.tagName === 'SELECT') return 'select';
  if (el.tagName === 'INPUT' && (t === 'checkbox' || t === 'radio')) return 'check';
  return 'text';
}"""


class FillFormTool(BrowserTool[FillFormArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            FillFormArgs,
            "browser_fill_form",
            f"Fill several form fields at once (without submitting; {SUBMIT_HINT}).",
            min_autonomy=Autonomy.SUPERVISED,
        )

    async def act(self, agent: AgentBrowser, args: FillFormArgs) -> ToolOutput:
        for item in args.fields:
            locator = await locate(agent, item.ref)
            kind = await locator.evaluate(_KIND_JS)
            if kind == "select":
                await locator.select_option(item.value)
            elif kind == "check":
                await locator.set_checked(item.value.strip().lower() in ("true", "yes", "on", "1"))
            else:
                await locator.fill(item.value)
        return await self.snapshot_answer(agent, f"Filled {len(args.fields)} field(s).")


class SelectArgs(ToolArgs):
    ref: str = Ref
    values: list[str] = Field(min_length=1, max_length=50, description="Option labels or values.")


class SelectTool(BrowserTool[SelectArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            SelectArgs,
            "browser_select",
            "Choose options of a select (dropdown) element by ref.",
            min_autonomy=Autonomy.SUPERVISED,
        )

    async def act(self, agent: AgentBrowser, args: SelectArgs) -> ToolOutput:
        locator = await locate(agent, args.ref)
        chosen = await locator.select_option(args.values)
        return await self.snapshot_answer(agent, f"Selected {', '.join(chosen) or 'nothing'}.")


class PressArgs(ToolArgs):
    key: str = Field(
        min_length=1, max_length=40, description="Key name: ArrowDown, Escape, Tab, a, Control+a…"
    )
    ref: str | None = Field(default=None, max_length=40, description="Element to focus first.")


class PressTool(BrowserTool[PressArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            PressArgs,
            "browser_press",
            f"Press a key, on an element by ref or the focused one ({SUBMIT_HINT}).",
            min_autonomy=Autonomy.SUPERVISED,
        )

    async def act(self, agent: AgentBrowser, args: PressArgs) -> ToolOutput:
        page = await _page(agent)
        locator = await locate(agent, args.ref) if args.ref is not None else None
        last = args.key.split("+")[-1]
        if last in ("Enter", "NumpadEnter"):
            target = locator or page.locator(":focus")
            if await target.count() and await target.first.evaluate(ENTER_SUBMITS_JS):
                raise BrowserError(f"Enter refused: it would submit a form; {SUBMIT_HINT}")
        if last in (" ", "Space") and locator is not None:
            await refuse_submitting(locator, "Space")
        if locator is not None:
            await locator.press(args.key)
        else:
            await page.keyboard.press(args.key)
        return await self.snapshot_answer(agent)


class SubmitArgs(ToolArgs):
    ref: str = Field(
        min_length=1, max_length=40, description="The form's submit button, or any field of it."
    )


_SUBMIT_JS = """el => {
  const b = el.closest('button, input');
  const t = b ? (b.getAttribute('type') || (b.tagName === 'BUTTON' ? 'submit' : 'text')) : '';
  if (b && b.form && (t.toLowerCase() === 'submit' || t.toLowerCase() === 'image')) return 'click';
  const form = el.form || el.closest('form');
  if (!form) return 'none';
  form.requestSubmit();
  return 'submitted';
}"""


class SubmitTool(BrowserTool[SubmitArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            SubmitArgs,
            "browser_submit",
            "Submit a form: click its submit button (ref) or submit the form a field (ref) "
            "belongs to. Sends data to the site, so it may need the person's approval.",
            min_autonomy=Autonomy.SUPERVISED,
            requires_approval=True,
        )

    async def act(self, agent: AgentBrowser, args: SubmitArgs) -> ToolOutput:
        locator = await locate(agent, args.ref)
        how = await locator.evaluate(_SUBMIT_JS)
        if how == "none":
            return ToolOutput.error(f"{args.ref} is not a form's button or field")
        if how == "click":
            await locator.click()
        return await self.snapshot_answer(agent, "Form submitted.")


# ------------------------------------------------------------------ waiting, tabs, images
class WaitForArgs(ToolArgs):
    text: str | None = Field(default=None, max_length=500, description="Wait until it appears.")
    text_gone: str | None = Field(default=None, max_length=500, description="…or disappears.")
    seconds: float | None = Field(default=None, gt=0, le=60, description="…or just wait.")


class WaitForTool(BrowserTool[WaitForArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            WaitForArgs,
            "browser_wait_for",
            "Wait for text to appear or disappear on the active tab, or for some seconds "
            f"(at most {pool.settings.action_timeout_seconds:g}).",
        )

    async def act(self, agent: AgentBrowser, args: WaitForArgs) -> ToolOutput:
        page = await _page(agent)
        limit = self.pool.settings.action_timeout_seconds
        if args.text is None and args.text_gone is None and args.seconds is None:
            return ToolOutput.error("give text, text_gone or seconds")
        if args.seconds is not None:
            await asyncio.sleep(min(args.seconds, limit))
        if args.text is not None:
            await page.get_by_text(args.text).first.wait_for(state="visible")
        if args.text_gone is not None:
            await page.get_by_text(args.text_gone).first.wait_for(state="hidden")
        return await self.snapshot_answer(agent)


class TabsArgs(ToolArgs):
    action: Literal["list", "new", "select", "close"] = "list"
    index: int | None = Field(default=None, ge=0, description="Tab for select/close.")
    url: str | None = Field(default=None, description="URL for a new tab (http/https).")


class TabsTool(BrowserTool[TabsArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            TabsArgs,
            "browser_tabs",
            f"List, open, select or close tabs (at most {pool.settings.max_pages}).",
        )

    async def act(self, agent: AgentBrowser, args: TabsArgs) -> ToolOutput:
        if args.action == "new":
            if len(agent.pages) >= self.pool.settings.max_pages:
                return ToolOutput.error(
                    f"at most {self.pool.settings.max_pages} tabs; close one first"
                )
            if args.url is not None and not args.url.lower().startswith(("http://", "https://")):
                return ToolOutput.error(f"only http:// and https:// URLs can be opened: {args.url}")
            page = await agent.new_page()
            if args.url is not None:
                await page.goto(args.url, wait_until="domcontentloaded")
            return await self.snapshot_answer(agent, f"Opened tab {agent.active}.")
        if args.action in ("select", "close"):
            if args.index is None or args.index >= len(agent.pages):
                return ToolOutput.error(f"no tab {args.index}; there are {len(agent.pages)}")
            if args.action == "select":
                agent.active = args.index
                await agent.page.bring_to_front()
                return await self.snapshot_answer(agent, f"Tab {args.index} is active.")
            await agent.pages[args.index].close()
            await asyncio.sleep(0)
        lines: list[str] = []
        for i, page in enumerate(agent.pages):
            mark = "*" if i == agent.active else " "
            lines.append(f"{mark} [{i}] {page.url} — {await page.title()}")
        return ToolOutput.ok("\n".join(lines) or "No tab is open.")


class ScreenshotArgs(ToolArgs):
    full_page: bool = Field(default=False, description="The whole page, not just the viewport.")
    ref: str | None = Field(default=None, max_length=40, description="Only this element.")


class ScreenshotTool(BrowserTool[ScreenshotArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            ScreenshotArgs,
            "browser_screenshot",
            "A PNG screenshot of the active tab (or one element), returned as an image.",
        )

    async def act(self, agent: AgentBrowser, args: ScreenshotArgs) -> ToolOutput:
        page = await _page(agent)
        if args.ref is not None:
            data = await (await locate(agent, args.ref)).screenshot()
        else:
            data = await page.screenshot(full_page=args.full_page)
        image = ImagePart(media_type="image/png", data=base64.b64encode(data).decode())
        return ToolOutput(
            content=f"Screenshot of {page.url} ({len(data):,} bytes PNG).", parts=(image,)
        )


class CloseTool(BrowserTool[ToolArgs]):
    def __init__(self, pool: BrowserPool) -> None:
        super().__init__(
            pool,
            ToolArgs,
            "browser_close",
            "Close the browser: every tab, cookie and login of this agent's session is dropped.",
        )

    async def run(self, args: ToolArgs, session: SessionRef) -> ToolOutput:
        closed = await self.pool.close_agent(session.agent_id)
        return ToolOutput.ok("Browser closed." if closed else "The browser was not open.")

    async def act(self, agent: AgentBrowser, args: ToolArgs) -> ToolOutput:
        raise AssertionError("browser_close overrides run")  # pragma: no cover


def browser_tools(pool: BrowserPool) -> list[Tool]:
    """Every ``browser_*`` tool over ``pool``."""
    return [
        NavigateTool(pool),
        SnapshotTool(pool),
        ClickTool(pool),
        TypeTool(pool),
        FillFormTool(pool),
        SelectTool(pool),
        PressTool(pool),
        SubmitTool(pool),
        WaitForTool(pool),
        BackTool(pool),
        TabsTool(pool),
        ScreenshotTool(pool),
        CloseTool(pool),
    ]


__all__ = [
    "BackTool",
    "BrowserTool",
    "ClickTool",
    "CloseTool",
    "FillFormTool",
    "NavigateTool",
    "PressTool",
    "ScreenshotTool",
    "SelectTool",
    "SnapshotTool",
    "SubmitTool",
    "TabsTool",
    "TypeTool",
    "WaitForTool",
    "browser_tools",
]
