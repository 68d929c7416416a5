"""Browser snapshots: how much the tree trimming saves on fixture pages (issue 25).

The seed reports a news front page going from 59 KB to 1.4 KB. Here three fixture pages
(a news front page, a shop listing, a sign-up form) are served on 127.0.0.1 and opened
in real Chromium through :class:`~beamclaw_tools.browser.BrowserPool`; for each we
report the HTML size, the untrimmed ``ai`` aria snapshot, the trimmed snapshot the tools
answer with, the ratio between the two, and the median time of snapshot + trim. Skipped
(reported, not failed) when no Chromium is found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from beamclaw_tools.browser import open_browser_pool, trimmed_snapshot
from beamclaw_tools.settings import BrowserSettings
from bench.common import median

ROUNDS = 5


def news_page() -> str:
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(40))
    cards = "".join(
        f"""<article class="card"><div class="media"><a href="/story/{i}?ref=front&amp;pos={i}">
<img src="/img/{i}.jpg" alt=""></a></div><div class="body"><div class="kicker"><span>World</span>
</div><h2><a href="/story/{i}?ref=front&amp;pos={i}">Headline number {i}: something happened
</a></h2><p>A summary of story {i}, two sentences long so that it looks like a real teaser.
It goes on a little.</p><div class="meta"><span>By Reporter {i % 7}</span><time>{i} min ago</time>
</div><ul class="tags"><li><a href="/tag/a{i}">tag a</a></li><li><a href="/tag/b{i}">tag b</a></li>
</ul></div><hr></article>"""
        for i in range(60)
    )
    most_read = "".join(f'<li><a href="/story/{i}">Most read {i}</a></li>' for i in range(10))
    footer = "".join(f'<li><a href="/about/{i}">Footer link {i}</a></li>' for i in range(50))
    return (
        "<html><head><title>The Daily Fixture</title></head><body>"
        f"<header><div><div><a href='/'>The Daily Fixture</a></div></div><nav><ul>{nav}</ul></nav>"
        f"</header><main><h1>Front page</h1><div class='grid'>{cards}</div></main>"
        f"<aside><h2>Most read</h2><ol>{most_read}</ol></aside>"
        f"<footer><ul>{footer}</ul></footer></body></html>"
    )


def shop_page() -> str:
    rows = "".join(
        f"""<div class="product"><div><div><img src="/p/{i}.png" alt="Product {i}"></div>
<div><a href="/product/{i}">Product {i}</a><span class="price">{i}.99 €</span>
<button>Add to cart</button></div></div></div>"""
        for i in range(120)
    )
    return f"<html><head><title>Shop</title></head><body><h1>All products</h1>{rows}</body></html>"


def form_page() -> str:
    fields = "".join(
        f'<div class="row"><label>Field {i} <input name="f{i}"></label></div>' for i in range(12)
    )
    return (
        "<html><head><title>Sign up</title></head><body><h1>Sign up</h1><form>"
        f"{fields}<button type='submit'>Send</button></form></body></html>"
    )


PAGES: dict[str, Callable[[], str]] = {"news": news_page, "shop": shop_page, "form": form_page}


async def run() -> dict[str, Any]:
    probe = BrowserSettings()
    app = web.Application()
    for name, make in PAGES.items():
        body = make()

        async def handler(_: web.Request, body: str = body) -> web.Response:
            return web.Response(text=body, content_type="text/html")

        app.router.add_get(f"/{name}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    settings = probe.model_copy(update={"allowed_hosts": [f"127.0.0.1:{port}"]})
    pool = open_browser_pool(settings)
    if pool is None:
        await runner.cleanup()
        return {"skipped": "no Chromium found ([tools.browser] executable_path)"}
    out: dict[str, Any] = {}
    try:
        agent = await pool.agent("bench", Path.cwd())
        page = await agent.ensure_page()
        for name, make in PAGES.items():
            await page.goto(f"http://127.0.0.1:{port}/{name}")
            full = await page.aria_snapshot(mode="ai")
            trimmed = trimmed_snapshot(full, settings.snapshot_max_chars)
            times: list[float] = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                trimmed_snapshot(await page.aria_snapshot(mode="ai"), settings.snapshot_max_chars)
                times.append((time.perf_counter() - started) * 1000)
            out[f"{name}_html_bytes"] = len(make().encode())
            out[f"{name}_full_snapshot_chars"] = len(full)
            out[f"{name}_trimmed_chars"] = len(trimmed)
            out[f"{name}_full_over_trimmed"] = round(len(full) / max(1, len(trimmed)), 1)
            out[f"{name}_html_over_trimmed"] = round(len(make()) / max(1, len(trimmed)), 1)
            out[f"{name}_snapshot_and_trim_p50_ms"] = round(median(times), 1)
    finally:
        await pool.close()
        await runner.cleanup()
    return out
