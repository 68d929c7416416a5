"""The web page (``/ui/``) end to end: headless Chromium against a real gateway on the fake
LLM server (real HTTP and WebSocket, the real core and store).

Streaming runs in lockstep: the fake upstream sends token ``k`` only once the page shows
the tokens before ``k - 1`` (one token of slack for the stream scrubber), so a page that
buffered a reply would stall the test instead of passing it. Each view is saved as a
screenshot under ``test-artifacts/web-ui/``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from playwright.async_api import Page, Request, expect

from beamclaw_core.testing import FakeReply, FakeToolCall

from .web_ui_support import TOKEN, TcpProxy, chromium, gateway_on, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(60)]

# no "token", "key" or "password": a word after one may be a secret's value and waits
WORDS = ("Hi! Each word shows up in the page the moment the core streams it, " * 2).split()
TOKENS = (WORDS[0], *(" " + w for w in WORDS[1:]))
ANSWER = "".join(TOKENS)
LAST_REPLY = "#transcript > li.assistant >> nth=-1"

HOSTILE = (
    "**bold** and *soft* <img src=x onerror=\"window.__pwned='img'\">"
    "<script>window.__pwned='script'</script> [bad](javascript:window.__pwned='link') "
    "[good](https://example.org/a) `<b>inline</b>`\n\n"
    "```html\n<iframe src=\"javascript:window.__pwned='frame'\"></iframe>\n```\n"
    "- one\n- two\n"
)


def lockstep(page: Page, tokens: tuple[str, ...]) -> Callable[[int], Awaitable[None]]:
    """A fake-server gate: event ``k + 1`` (token ``k``) waits until the page's last
    reply shows every token before ``k - 1``."""

    async def gate(event: int) -> None:
        want = "".join(tokens[: max(0, event - 2)])
        async with asyncio.timeout(5):
            while not (await shown(page)).startswith(want):
                await asyncio.sleep(0.01)

    return gate


async def shown(page: Page) -> str:
    text = await page.evaluate(
        "() => [...document.querySelectorAll('#transcript > li.assistant')].at(-1)"
        "?.querySelector('.md')?.textContent ?? ''"
    )
    return str(text)


async def sign_in(page: Page, base_url: str) -> None:
    await page.goto(f"{base_url}/ui/#token={TOKEN}")
    await expect(page.locator("#connection")).to_have_text("Connected")


async def test_login_stream_history_shift_enter_and_inert_markdown(tmp_path: Path) -> None:
    urls: list[str] = []
    async with chromium() as browser:
        page = await browser.new_page()
        page.on("request", lambda r: urls.append(r.url))
        script = [FakeReply(tokens=TOKENS, gate=lockstep(page, TOKENS)), FakeReply(text=HOSTILE)]
        async with gateway_on(script) as (_server, gw):
            await sign_in(page, gw.base_url)
            # the token left the address bar and lives in this tab's storage
            assert page.url == f"{gw.base_url}/ui/"
            assert await page.evaluate("sessionStorage.getItem('beamclaw.token')") == TOKEN

            box = page.get_by_label("Message")
            await box.fill("hello there")
            await box.press("Enter")
            await expect(page.locator(LAST_REPLY)).to_have_attribute("aria-busy", "false")
            assert await shown(page) == ANSWER
            await expect(page.locator("#transcript > li.user")).to_have_text(["Youhello there"])
            assert await box.input_value() == ""

            # Shift+Enter breaks the line; Enter sends both lines as one message
            await box.type("line one")
            await box.press("Shift+Enter")
            await box.type("line two")
            assert await box.input_value() == "line one\nline two"
            assert await page.locator("#transcript > li.user").count() == 1
            await box.press("Enter")
            await expect(page.locator("#transcript > li.user").nth(1)).to_contain_text(
                "line one\nline two"
            )

            # model output with HTML and script is shown as text, never run
            reply = page.locator(LAST_REPLY)
            await expect(reply).to_have_attribute("aria-busy", "false")
            await expect(reply.locator("strong")).to_have_text("bold")
            await expect(reply.locator("em")).to_have_text("soft")
            await expect(reply.locator("li")).to_have_text(["one", "two"])
            await expect(reply.locator("pre code")).to_have_text(
                "<iframe src=\"javascript:window.__pwned='frame'\"></iframe>"
            )
            await expect(reply.locator("code").first).to_have_text("<b>inline</b>")
            assert "<script>window.__pwned='script'</script>" in await reply.inner_text()
            assert await reply.locator("img, script, iframe, b").count() == 0
            links = reply.locator("a")
            await expect(links).to_have_count(1)
            assert await links.get_attribute("href") == "https://example.org/a"
            assert await links.get_attribute("rel") == "noopener noreferrer nofollow"
            assert await page.evaluate("window.__pwned") is None
            await screenshot(page, "chat")

            # a reload shows the conversation from the server (the token stays in the tab)
            await page.reload()
            await expect(page.locator("#connection")).to_have_text("Connected")
            await expect(page.locator("#transcript > li.user")).to_have_count(2)
            await expect(page.locator("#transcript > li.assistant").first).to_contain_text(ANSWER)
            await expect(page.locator(LAST_REPLY).locator("strong")).to_have_text("bold")
            assert await page.evaluate("window.__pwned") is None
            await screenshot(page, "chat-after-reload")
    assert not [u for u in urls if TOKEN in u], "the token must never be in a URL"
    assert not [u for u in urls if "token=" in u.split("#")[0]]


def note_call() -> FakeReply:
    return FakeReply(
        tool_calls=(FakeToolCall("write_file", {"path": "note.txt", "content": "from the page"}),)
    )


async def test_approve_a_tool_call_queue_position_stop_and_new(beamclaw_home: Path) -> None:
    async with chromium() as browser:
        page = await browser.new_page()
        hold = asyncio.Event()
        script = [
            note_call(),
            FakeReply(text="Wrote the note."),
            FakeReply(text="A slow answer that waits", hold=hold),
            FakeReply(text="Nothing worth keeping."),  # /new's memory flush
        ]
        async with gateway_on(script) as (_server, gw):
            await sign_in(page, gw.base_url)
            box = page.get_by_label("Message")
            await box.fill("write a note")
            await box.press("Enter")
            card = page.locator("#transcript .approval")
            await expect(card).to_contain_text("Approve write_file?")
            await expect(card.locator("pre")).to_contain_text("from the page")
            await expect(page.locator("#activity")).to_have_text(
                "waiting for approval of write_file"
            )
            await screenshot(page, "approval")
            await card.get_by_role("button", name="Approve").click()
            await expect(card).to_contain_text("Approved")
            await expect(page.locator(LAST_REPLY)).to_contain_text("Wrote the note.")
            await expect(page.locator(LAST_REPLY).locator(".tool")).to_contain_text("✓ done")
            note = beamclaw_home / "agents" / "default" / "note.txt"
            assert note.read_text() == "from the page"

            # a turn held open upstream, a second message queued behind it, then Stop
            await box.fill("take your time")
            await box.press("Enter")
            await expect(page.locator(LAST_REPLY)).to_contain_text("A slow answer")
            await box.fill("and then this")
            await box.press("Enter")
            await expect(page.locator("#activity")).to_have_text("queued #1")
            await expect(page.locator("#transcript > li.queue")).to_contain_text("position 1")
            await screenshot(page, "queued")
            stop = page.get_by_role("button", name="Stop")
            await expect(stop).to_be_enabled()
            await stop.click()
            await expect(page.locator("#transcript")).to_contain_text("Stopped")
            await expect(page.locator("#transcript")).to_contain_text("was dropped")
            await expect(page.locator("#activity")).to_have_text("idle")
            await expect(stop).to_be_disabled()
            hold.set()

            await box.fill("/new")
            await box.press("Enter")
            await expect(page.locator("#transcript > li.notice").last).to_have_text(
                "Started a fresh session."
            )
            await screenshot(page, "stopped-and-new")


async def test_reconnect_mid_stream_loses_and_repeats_nothing() -> None:
    cut_at, back_at = 12, 18
    async with chromium() as browser:
        page = await browser.new_page()
        proxy_box: list[TcpProxy] = []
        banner = page.locator("#banner")

        async def gate(event: int) -> None:
            proxy = proxy_box[0]
            if event == cut_at:
                await lockstep(page, TOKENS)(event)
                proxy.cut()  # the gateway vanishes mid-stream
                await expect(banner).to_contain_text("reconnecting")
                await screenshot(page, "connection-lost")
            elif cut_at < event < back_at:
                await asyncio.sleep(0.02)  # tokens the page cannot see now
            elif event == back_at:
                proxy.restore()
                await lockstep(page, TOKENS)(event)  # only a replay can satisfy this
            else:
                await lockstep(page, TOKENS)(event)

        async with (
            gateway_on([FakeReply(tokens=TOKENS, gate=gate)]) as (_server, gw),
            TcpProxy(gw.port) as proxy,
        ):
            proxy_box.append(proxy)
            await sign_in(page, proxy.base_url)
            box = page.get_by_label("Message")
            # a new session: the page follows the turn it started, then, reconnected,
            # subscribes from the last sequence number it applied
            await box.fill("stream to me")
            await box.press("Enter")
            await expect(page.locator(LAST_REPLY)).to_have_attribute(
                "aria-busy", "false", timeout=20_000
            )
            assert await shown(page) == ANSWER  # nothing lost, nothing twice
            await expect(banner).to_be_hidden()
            await expect(page.locator("#connection")).to_have_text("Connected")


async def test_control_views_sessions_transcript_health_approvals_usage_schedules() -> None:
    async with chromium() as browser:
        page = await browser.new_page()
        async with gateway_on([FakeReply(text="A **first** answer.")]) as (_server, gw):
            await sign_in(page, gw.base_url)
            box = page.get_by_label("Message")
            await box.fill("hello")
            await box.press("Enter")
            await expect(page.locator(LAST_REPLY)).to_have_attribute("aria-busy", "false")

            await page.get_by_role("button", name="Sessions").click()
            row = page.locator("#sessions-table tbody tr").first
            await expect(row).to_contain_text("default")
            cells = row.locator("td")
            await expect(cells.nth(5)).to_have_text("2")  # messages: the question, the answer
            await expect(cells.nth(7)).to_contain_text("ago")
            await row.get_by_role("button").click()
            transcript = page.locator("#session-transcript")
            await expect(transcript.locator("li.user")).to_contain_text("hello")
            await expect(transcript.locator("li.assistant strong")).to_have_text("first")
            await screenshot(page, "sessions")

            await page.get_by_role("button", name="Health").click()
            await expect(page.locator("#health-summary")).to_contain_text("Overall: up")
            for name in ("database", "sessions", "channels", "rate_limit"):
                await expect(page.locator(f'[data-component="{name}"]')).to_be_visible()
            await screenshot(page, "health")

            await page.get_by_role("button", name="Approvals").click()
            await expect(page.locator("#approvals-list")).to_contain_text("Nothing is waiting")
            await screenshot(page, "approvals")

            await page.get_by_role("button", name="Usage").click()
            usage = page.locator("#usage-table tbody tr").first
            await expect(usage.locator("td").nth(1)).to_have_text("default")
            await expect(usage.locator("td").nth(2)).to_have_text("1")
            await expect(usage.locator("td").nth(5)).to_have_text("18")
            await screenshot(page, "usage")

            await page.get_by_role("button", name="Schedules").click()
            await expect(page.locator("#schedules-note")).to_have_text(
                "The scheduler is not enabled on this gateway."
            )
            await screenshot(page, "schedules")

            # phone width: nothing wider than the screen, every control still reachable
            await page.set_viewport_size({"width": 390, "height": 844})
            await page.get_by_role("button", name="Chat").click()
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390
            await expect(page.get_by_label("Message")).to_be_visible()
            await screenshot(page, "chat-phone")


async def test_wrong_token_is_refused_visibly_once() -> None:
    calls: list[Request] = []
    async with chromium() as browser:
        page = await browser.new_page()
        async with gateway_on([FakeReply(text="Welcome back.")]) as (_server, gw):
            page.on(
                "request", lambda r: calls.append(r) if "/api/" in r.url or "/ws" in r.url else None
            )
            await page.goto(f"{gw.base_url}/ui/#token=not-the-token")
            refusal = page.locator("#login-message")
            await expect(refusal).to_have_text(
                "The gateway refused this token. Enter the right one to connect."
            )
            await expect(page.locator("#nav")).to_be_hidden()
            await expect(page.locator("#view-chat")).to_be_hidden()
            assert page.url == f"{gw.base_url}/ui/"
            assert await page.evaluate("sessionStorage.getItem('beamclaw.token')") is None
            await screenshot(page, "token-refused")
            await asyncio.sleep(1.5)
            assert len(calls) == 1, [c.url for c in calls]  # no retry storm

            await page.get_by_label("Gateway token").fill(TOKEN)
            await page.get_by_role("button", name="Connect").click()
            await expect(page.locator("#connection")).to_have_text("Connected")
            await expect(refusal).to_be_hidden()


async def test_schedules_view_lists_pauses_resumes_and_deletes_a_job() -> None:
    """With the scheduler on, the page shows a job made over REST and drives it."""
    import httpx

    async with chromium() as browser:
        page = await browser.new_page()
        async with gateway_on([], scheduler=True) as (_server, gw):
            async with httpx.AsyncClient(
                base_url=gw.base_url, headers={"Authorization": f"Bearer {TOKEN}"}
            ) as c:
                made = await c.post(
                    "/api/schedules",
                    json={"prompt": "daily briefing", "cron": "0 7 * * *", "timezone": "UTC"},
                )
            assert made.status_code == 201, made.text
            await sign_in(page, gw.base_url)
            await page.get_by_role("button", name="Schedules").click()
            row = page.locator("#schedules-table tbody tr").first
            await expect(row).to_contain_text("daily briefing")
            await expect(row.locator("td").nth(2)).to_have_text("active")
            await screenshot(page, "schedules-active")
            await row.get_by_role("button", name="Pause").click()
            await expect(row.locator("td").nth(2)).to_have_text("paused")
            await row.get_by_role("button", name="Resume").click()
            await expect(row.locator("td").nth(2)).to_have_text("active")
            await row.get_by_role("button", name="Delete").click()
            await expect(page.locator("#schedules-note")).to_have_text("No schedules.")


async def test_a_gateway_that_goes_away_gets_a_banner_and_a_calm_reconnect() -> None:
    """Gateway down: a banner says so at once, reconnects back off (no retry storm), and
    the page is connected again by itself once the gateway answers."""
    async with chromium() as browser:
        page = await browser.new_page()
        async with gateway_on([]) as (_server, gw), TcpProxy(gw.port) as proxy:
            await sign_in(page, proxy.base_url)
            banner = page.locator("#banner")
            proxy.cut()
            await expect(banner).to_contain_text("reconnecting")
            before = proxy.attempts
            await asyncio.sleep(4)
            tries = proxy.attempts - before
            assert 1 <= tries <= 8, f"{tries} connection attempts in 4 s while down"
            await screenshot(page, "gateway-down")
            proxy.restore()
            await expect(page.locator("#connection")).to_have_text("Connected", timeout=20_000)
            await expect(banner).to_be_hidden()


async def test_a_very_long_reply_leaves_the_page_responsive() -> None:
    """A 200 KB answer streamed in 400 pieces: the page shows all of it, and typing stays
    quick while it arrives."""
    piece = "A long line of the answer, with `code` and *words* in it. " * 8 + "\n"
    tokens = tuple(piece for _ in range(400))
    typed: list[float] = []

    async def gate(event: int) -> None:
        if event == 200:  # halfway: the person types while the reply streams
            started = asyncio.get_running_loop().time()
            await page.get_by_label("Message").press_sequentially("still here", delay=0)
            typed.append(asyncio.get_running_loop().time() - started)

    async with chromium() as browser:
        page = await browser.new_page()
        async with gateway_on([FakeReply(tokens=tokens, gate=gate)]) as (_server, gw):
            await sign_in(page, gw.base_url)
            box = page.get_by_label("Message")
            await box.fill("tell me everything")
            await box.press("Enter")
            await expect(page.locator(LAST_REPLY)).to_have_attribute(
                "aria-busy", "false", timeout=30_000
            )
            text = await shown(page)
            assert len(text) >= 0.85 * len("".join(tokens)), len(text)
            assert typed and typed[0] < 2.0, f"typing took {typed} s while streaming"
            assert await box.input_value() == "still here"


async def test_tasks_view_lists_the_agents_own_tasks(beamclaw_home: Path) -> None:
    """The Tasks view shows TASKS.md: open tasks first, with the job each is scheduled as."""
    from beamclaw_core.workspace import TASKS_FILENAME, agent_dir, write_tasks

    write_tasks(
        agent_dir("default", beamclaw_home) / TASKS_FILENAME,
        "# TASKS.md\n- [x] Book the dentist\n- [ ] Water the plants [scheduled:j1]\n",
    )
    async with chromium() as browser:
        page = await browser.new_page()
        async with gateway_on([]) as (_server, gw):
            await sign_in(page, gw.base_url)
            await page.get_by_role("button", name="Tasks").click()
            rows = page.locator("#tasks-table tbody tr")
            await expect(rows).to_have_count(2)
            await expect(rows.nth(0).locator("td").nth(0)).to_have_text("Water the plants")
            await expect(rows.nth(0).locator("td").nth(2)).to_have_text("open")
            await expect(rows.nth(0).locator("td").nth(3)).to_have_text("j1")
            await expect(rows.nth(1).locator("td").nth(2)).to_have_text("done")
            await screenshot(page, "tasks")
