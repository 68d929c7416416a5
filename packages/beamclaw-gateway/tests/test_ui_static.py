"""``/ui/``: the web page's files, their security headers, and no rate limit on them."""

from __future__ import annotations

import httpx
import pytest

from beamclaw_gateway.ui import CONTENT_SECURITY_POLICY, UI_HEADERS
from beamclaw_gateway.ui.routes import static_files

from .conftest import gateway_config, live_gateway


def test_csp_allows_only_this_origin_and_no_html_sinks() -> None:
    directives: dict[str, str] = {}
    for directive in CONTENT_SECURITY_POLICY.split("; "):
        name, _, value = directive.partition(" ")
        directives[name] = value
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
    assert directives["style-src"] == "'self'"
    assert directives["connect-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["base-uri"] == "'none'"
    assert directives["form-action"] == "'none'"
    assert directives["require-trusted-types-for"] == "'script'"
    assert directives["trusted-types"] == "'none'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY


def test_the_page_loads_nothing_inline_and_never_writes_html() -> None:
    """The CSP forbids inline script and style; the scripts build nodes from text."""
    files = static_files()
    assert {"index.html", "app.js", "markdown.js", "style.css"} <= set(files)
    html = files["index.html"][0].decode()
    assert "<script>" not in html and "style=" not in html and " on" + "click" not in html
    for name, (body, _type) in files.items():
        if name.endswith(".js"):
            text = body.decode()
            for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
                assert sink not in text, (name, sink)


async def test_files_come_with_the_hardening_headers() -> None:
    async with live_gateway(None) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        index = await c.get("/ui/")
        script = await c.get("/ui/app.js")
        style = await c.get("/ui/style.css")
        bare = await c.get("/ui")
        missing = await c.get("/ui/../app.py")
        unknown = await c.get("/ui/nothing.js")
    assert index.status_code == 200
    assert index.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="app.js"></script>' in index.text
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert style.headers["content-type"] == "text/css; charset=utf-8"
    for response in (index, script, style, bare, unknown):
        for name, value in UI_HEADERS.items():
            assert response.headers[name] == value, (response.url, name)
    assert index.headers["x-frame-options"] == "DENY"
    assert index.headers["referrer-policy"] == "no-referrer"
    assert index.headers["x-content-type-options"] == "nosniff"
    assert bare.status_code == 308
    assert bare.headers["location"] == "/ui/"
    assert unknown.status_code == 404
    assert missing.status_code == 404


@pytest.mark.parametrize("path", ["/ui/", "/ui/app.js", "/ui/style.css", "/ui"])
async def test_static_files_are_not_rate_limited_but_the_api_is(path: str) -> None:
    config = gateway_config()
    config.gateway.rate_limit.per_loopback = "3/minute"
    async with live_gateway(None, config) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        static = [await c.get(path) for _ in range(10)]
        api = [await c.get("/api/status") for _ in range(4)]
    assert {r.status_code for r in static} <= {200, 308}
    assert all("x-ratelimit-limit" not in r.headers for r in static)
    assert [r.status_code for r in api] == [200, 200, 200, 429]
