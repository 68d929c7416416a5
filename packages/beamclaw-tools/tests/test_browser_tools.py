"""The browser tools against real Chromium and local pages served over real HTTP.

One browser per module (the ``pool`` fixture); every call goes through a real
:class:`ToolRegistry`, so results are scrubbed and capped as in a turn. The pages are on
127.0.0.1: the pool allows exactly the main server's ``host:port``, so the second
server ("intranet") stands for a private address the guard must refuse.
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from beamclaw_tools import SessionRef, ToolCall, ToolRegistry, ToolResult
from beamclaw_tools.browser import BrowserPool, browser_tools, open_browser_pool
from beamclaw_tools.settings import BrowserSettings

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

BIG_DOWNLOAD = 50_000
DOWNLOAD_CAP = 10_000

FORM = """<html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form method="post" action="/submitted">
  <label>Name <input name="name"></label>
  <label>Email <input name="email" type="email"></label>
  <label>Colour <select name="colour"><option>red</option><option>green</option></select></label>
  <label><input type="checkbox" name="agree" value="yes"> I agree</label>
  <textarea name="note" aria-label="Note"></textarea>
  <button type="submit">Send</button>
</form></body></html>"""

CHANGING = """<html><body><h1>Counter</h1><p id="out">nothing yet</p>
<button onclick="document.getElementById('out').textContent='clicked once';
 this.remove(); document.body.insertAdjacentHTML('beforeend','<button>Again</button>')">
Press me</button></body></html>"""

DIALOGS = """<html><body>
<button onclick="alert('Saved!'); document.title='after alert'">Alert</button>
<button onclick="document.getElementById('r').textContent = confirm('Delete all?') ? 'yes' : 'no'">
Confirm</button><p id="r">-</p>
<a href="/step2" target="_blank">Open in new tab</a>
</body></html>"""


INFINITE = """<html><body><h1>Feed</h1><ul id="feed"></ul><script>
let n = 0;
function more() { const ul = document.getElementById('feed');
  for (let i = 0; i < 40; i++) { const li = document.createElement('li');
    li.innerHTML = '<a href="/post/' + n + '">Post ' + n + ' with a longish title</a>'; n++;
    ul.appendChild(li); } }
more(); setInterval(more, 50);
window.addEventListener('scroll', more);
</script></body></html>"""


def large_page() -> str:
    items = "".join(
        f'<li><div class="card"><div class="inner"><span><a href="/article/{i}?utm=x">'
        f"Story number {i} about things</a></span></div><hr></div></li>"
        for i in range(400)
    )
    return (
        "<html><head><title>News</title></head><body><header><nav><ul>"
        + "".join(f'<li><a href="/s/{i}">Section {i}</a></li>' for i in range(30))
        + f"</ul></nav></header><main><h1>Front page</h1><ul>{items}</ul></main></body></html>"
    )


def html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html")


def build_app(intranet: list[str]) -> web.Application:
    app = web.Application()

    async def form(_: web.Request) -> web.Response:
        return html(FORM)

    async def submitted(request: web.Request) -> web.Response:
        data = await request.post()
        shown = ", ".join(f"{k}={data[k]}" for k in sorted(data))
        return html(f"<html><body><h1>Thanks</h1><p>Got {shown}</p></body></html>")

    async def step(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        link = f'<a href="/step{n + 1}">Next</a>' if n < 3 else "<p>The end</p>"
        return html(f"<html><head><title>Step {n}</title></head><body>{link}</body></html>")

    async def to_intranet(_: web.Request) -> web.Response:
        raise web.HTTPFound(intranet[0] + "/secret")

    async def hang(_: web.Request) -> web.Response:
        await asyncio.sleep(3600)
        return html("never")

    async def download(request: web.Request) -> web.Response:
        size = int(request.match_info["size"])
        return web.Response(
            body=b"x" * size,
            headers={
                "Content-Type": "application/octet-stream",
                "Content-Disposition": f'attachment; filename="file-{size}.bin"',
            },
        )

    async def downloads(_: web.Request) -> web.Response:
        return html(
            f'<html><body><a href="/dl/{DOWNLOAD_CAP // 2}">small file</a>'
            f'<a href="/dl/{BIG_DOWNLOAD}">big file</a></body></html>'
        )

    async def set_cookie(_: web.Request) -> web.Response:
        response = html("<html><body><p>cookie set</p></body></html>")
        response.set_cookie("who", "ann")
        return response

    async def whoami(request: web.Request) -> web.Response:
        return html(f"<html><body><p>you are {request.cookies.get('who', 'nobody')}</p></body>")

    app.router.add_get("/form", form)
    app.router.add_post("/submitted", submitted)
    app.router.add_get(r"/step{n:\d}", step)
    app.router.add_get("/changing", static(CHANGING))
    app.router.add_get("/dialogs", static(DIALOGS))
    app.router.add_get("/large", static(large_page()))
    app.router.add_get("/infinite", static(INFINITE))

    async def peeks(_: web.Request) -> web.Response:
        return html(f'<html><body><h1>Peek</h1><img src="{intranet[0]}/secret"></body></html>')

    app.router.add_get("/peeks", peeks)
    app.router.add_get("/to-intranet", to_intranet)
    app.router.add_get("/hang", hang)
    app.router.add_get("/downloads", downloads)
    app.router.add_get(r"/dl/{size:\d+}", download)
    app.router.add_get("/set-cookie", set_cookie)
    app.router.add_get("/whoami", whoami)
    app.router.add_get("/secret", static("<p>intranet secret</p>"))
    return app


def static(text: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(_: web.Request) -> web.Response:
        return html(text)

    return handler


@dataclass
class Site:
    base: str
    intranet: str
    settings: BrowserSettings


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[Site]:
    intranet: list[str] = []
    runner = web.AppRunner(build_app(intranet), shutdown_timeout=0.5)
    await runner.setup()
    main = web.TCPSite(runner, "127.0.0.1", 0)
    other = web.TCPSite(runner, "127.0.0.1", 0)
    await main.start()
    await other.start()
    port = runner.addresses[0][1]
    intranet.append(f"http://127.0.0.1:{runner.addresses[1][1]}")
    settings = BrowserSettings(
        allowed_hosts=[f"127.0.0.1:{port}"],
        navigation_timeout_seconds=3,
        action_timeout_seconds=3,
        download_max_bytes=DOWNLOAD_CAP,
        snapshot_max_chars=5_000,
    )
    yield Site(f"http://127.0.0.1:{port}", intranet[0], settings)
    await runner.cleanup()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def pool(site: Site) -> AsyncIterator[BrowserPool]:
    made = open_browser_pool(site.settings)
    assert made is not None, "Chromium is required (apt-get install chromium)"
    yield made
    await made.close()


_ids = count()


@dataclass
class Browser:
    registry: ToolRegistry
    session: SessionRef

    async def call(self, name: str, **args: object) -> ToolResult:
        call = ToolCall(id=f"c{next(_ids)}", name=name, args=dict(args))
        return await self.registry.execute(call, self.session)

    async def ok(self, name: str, **args: object) -> str:
        result = await self.call(name, **args)
        assert not result.is_error, result.content
        return result.content


@pytest.fixture
def browser(pool: BrowserPool, tmp_path: Path, request: pytest.FixtureRequest) -> Browser:
    registry = ToolRegistry()
    registry.register_many(browser_tools(pool))
    agent = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:60]
    return Browser(registry, SessionRef(session_id="s", agent_id=agent, workspace=tmp_path))


def ref_of(snapshot: str, role: str, name: str) -> str:
    match = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=(\w+)\]', snapshot)
    assert match, f"no {role} {name!r} in:\n{snapshot}"
    return match.group(1)


async def test_navigate_fill_submit_verify(browser: Browser, site: Site) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/form")
    assert "Page: " + site.base + "/form — Sign up" in page
    fields = [
        {"ref": ref_of(page, "textbox", "Name"), "value": "Ann"},
        {"ref": ref_of(page, "textbox", "Email"), "value": "ann@example.org"},
        {"ref": ref_of(page, "combobox", "Colour"), "value": "green"},
        {"ref": ref_of(page, "checkbox", "I agree"), "value": "true"},
    ]
    filled = await browser.ok("browser_fill_form", fields=fields)
    assert "[checked]" in filled
    send = ref_of(filled, "button", "Send")
    refused = await browser.call("browser_click", ref=send)
    assert refused.is_error
    assert "browser_submit" in refused.content
    note = ref_of(filled, "textbox", "Note")
    typed = await browser.ok("browser_type", ref=note, text="hello")
    assert "hello" in typed
    enter = await browser.call("browser_press", key="Enter", ref=ref_of(typed, "textbox", "Name"))
    assert enter.is_error
    assert "would submit a form" in enter.content
    done = await browser.ok("browser_submit", ref=send)
    assert "Got agree=yes, colour=green, email=ann@example.org, name=Ann, note=hello" in done


async def test_submit_tool_asks_for_approval_and_others_do_not(pool: BrowserPool) -> None:
    defs = {t.definition.name: t.definition for t in browser_tools(pool)}
    assert defs["browser_submit"].requires_approval
    assert defs["browser_submit"].min_autonomy.value == "supervised"
    assert defs["browser_click"].min_autonomy.value == "supervised"
    assert not any(d.requires_approval for n, d in defs.items() if n != "browser_submit")
    assert defs["browser_navigate"].min_autonomy.value == "read_only"
    assert set(defs) >= {
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_type",
        "browser_fill_form",
        "browser_select",
        "browser_press",
        "browser_wait_for",
        "browser_back",
        "browser_tabs",
        "browser_screenshot",
        "browser_close",
    }


async def test_multi_page_flow_and_back(browser: Browser, site: Site) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/step1")
    page = await browser.ok("browser_click", ref=ref_of(page, "link", "Next"))
    assert "Step 2" in page
    page = await browser.ok("browser_click", ref=ref_of(page, "link", "Next"))
    assert "Step 3" in page
    assert "The end" in page
    back = await browser.ok("browser_back")
    assert "/step2 — Step 2" in back


async def test_page_that_changes_after_a_click_and_stale_ref(browser: Browser, site: Site) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/changing")
    press = ref_of(page, "button", "Press me")
    after = await browser.ok("browser_click", ref=press)
    assert "clicked once" in after
    assert 'button "Again"' in after
    stale = await browser.call("browser_click", ref=press)
    assert stale.is_error
    assert "call browser_snapshot for fresh refs" in stale.content
    # a ref from an earlier document never reaches an element of the next one
    old = ref_of(after, "button", "Again")
    await browser.ok("browser_navigate", url=site.base + "/step1")
    assert (await browser.call("browser_click", ref=old)).is_error


async def test_large_page_is_trimmed_under_the_cap(browser: Browser, site: Site) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/large")
    trimmed = page.split("Snapshot:\n", 1)[1]
    full = (await browser.ok("browser_snapshot", full=True)).split("Snapshot:\n", 1)[1]
    assert len(trimmed) <= 5_000 + 200  # the cap plus the note saying how to see everything
    assert len(full) > 10 * len(trimmed)
    assert "/url:" in full
    assert "/url:" not in trimmed
    assert "separator" not in trimmed
    assert "more listitem" in trimmed or "more link" in trimmed
    assert 'link "Story number 0 about things"' in trimmed
    assert 'heading "Front page"' in trimmed


async def test_an_endlessly_growing_page_stays_under_the_cap(browser: Browser, site: Site) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/infinite")
    scrolled = await browser.ok("browser_press", key="End")
    later = await browser.ok("browser_wait_for", seconds=0.5)
    for answer in (page, scrolled, later):
        assert len(answer.split("Snapshot:\n", 1)[1]) <= 5_000 + 200
    assert 'link "Post 0 with a longish title"' in later
    grown = re.search(r"… (\d+) more link", later)
    assert grown is not None
    assert int(grown.group(1)) > 40


async def test_cookies_survive_between_calls(browser: Browser, site: Site) -> None:
    await browser.ok("browser_navigate", url=site.base + "/set-cookie")
    page = await browser.ok("browser_navigate", url=site.base + "/whoami")
    assert "you are ann" in page


async def test_redirect_to_a_private_address_is_refused(browser: Browser, site: Site) -> None:
    direct = await browser.call("browser_navigate", url=site.intranet + "/secret")
    assert direct.is_error
    assert "loopback" in direct.content
    redirected = await browser.call("browser_navigate", url=site.base + "/to-intranet")
    assert redirected.is_error, redirected.content
    assert "refused" in redirected.content
    assert site.intranet in redirected.content
    assert "intranet secret" not in redirected.content
    scheme = await browser.call("browser_navigate", url="file:///etc/passwd")
    assert scheme.is_error


async def test_a_page_sub_request_refusal_is_noted_for_its_agent_only(
    browser: Browser, site: Site
) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/peeks")
    assert f"Note: refused {site.intranet}/secret" in page
    other = Browser(browser.registry, browser.session.model_copy(update={"agent_id": "other"}))
    assert "refused" not in await other.ok("browser_navigate", url=site.base + "/step1")


async def test_page_that_never_finishes_loading_times_out(browser: Browser, site: Site) -> None:
    result = await browser.call("browser_navigate", url=site.base + "/hang")
    assert result.is_error
    assert "did not finish loading within 3 seconds" in result.content


async def test_dialogs_and_pop_ups_are_reported(browser: Browser, site: Site) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/dialogs")
    alert = await browser.ok("browser_click", ref=ref_of(page, "button", "Alert"))
    assert "alert dialog was accepted: 'Saved!'" in alert
    confirm = await browser.ok("browser_click", ref=ref_of(alert, "button", "Confirm"))
    assert "confirm dialog was dismissed: 'Delete all?'" in confirm
    assert "- text: no" in confirm or ": no" in confirm
    popup = await browser.ok("browser_click", ref=ref_of(confirm, "link", "Open in new tab"))
    assert "new tab opened" in popup
    assert "Step 2" in popup
    tabs = await browser.ok("browser_tabs")
    assert tabs.count("[") == 2
    assert "* [1]" in tabs
    closed = await browser.ok("browser_tabs", action="close", index=1)
    assert "* [0]" in closed


async def test_downloads_land_in_the_workspace_under_the_cap(
    browser: Browser, site: Site, tmp_path: Path
) -> None:
    page = await browser.ok("browser_navigate", url=site.base + "/downloads")
    small = await browser.ok("browser_click", ref=ref_of(page, "link", "small file"))
    assert f"downloaded file-{DOWNLOAD_CAP // 2}.bin" in small
    saved = tmp_path / "downloads" / f"file-{DOWNLOAD_CAP // 2}.bin"
    assert saved.stat().st_size == DOWNLOAD_CAP // 2
    big = await browser.ok("browser_click", ref=ref_of(small, "link", "big file"))
    assert "refused" in big
    assert "over the 10,000-byte limit" in big
    assert not (tmp_path / "downloads" / f"file-{BIG_DOWNLOAD}.bin").exists()


async def test_screenshot_is_an_image(browser: Browser, site: Site) -> None:
    await browser.ok("browser_navigate", url=site.base + "/step1")
    result = await browser.call("browser_screenshot")
    assert not result.is_error
    (image,) = result.parts
    assert image.type == "image"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")


async def test_wait_for_and_close(browser: Browser, site: Site, pool: BrowserPool) -> None:
    await browser.ok("browser_navigate", url=site.base + "/step3")
    assert "The end" in await browser.ok("browser_wait_for", text="The end")
    missing = await browser.call("browser_wait_for", text="never shown")
    assert missing.is_error
    assert "timed out" in missing.content
    assert pool.is_open(browser.session.agent_id)
    assert await browser.ok("browser_close") == "Browser closed."
    assert not pool.is_open(browser.session.agent_id)


async def test_idle_context_is_closed_and_browser_stops(site: Site, tmp_path: Path) -> None:
    settings = site.settings.model_copy(update={"idle_close_seconds": 0.5})
    own = open_browser_pool(settings)
    assert own is not None
    registry = ToolRegistry()
    registry.register_many(browser_tools(own))
    b = Browser(registry, SessionRef(session_id="s", agent_id="idle", workspace=tmp_path))
    try:
        await b.ok("browser_navigate", url=site.base + "/set-cookie")
        assert own.is_open("idle")
        assert own.running
        for _ in range(100):
            if not own.is_open("idle") and not own.running:
                break
            await asyncio.sleep(0.1)
        assert not own.is_open("idle")
        assert not own.running
        # a fresh context: the cookie went with the old one
        assert "you are nobody" in await b.ok("browser_navigate", url=site.base + "/whoami")
    finally:
        await own.close()
