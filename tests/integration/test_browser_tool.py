"""A real turn drives the browser: scripted provider, real core, loop, approvals, Chromium.

The provider reads the refs out of the snapshots the tools answer with (a callable
script rule), as a model would; the form is served over real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from beamclaw_core import ProviderSettings
from beamclaw_core.loop import ApprovalRequested, TurnDone
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers.base import CompletionOptions
from beamclaw_core.testing import CallTool, FakeOpenAIServer, FakeReply, Reply
from beamclaw_gateway.testing import live_gateway, quiet_config
from beamclaw_tools import SessionRef, ToolCall
from beamclaw_tools.browser import BrowserPool, browser_tools, open_browser_pool
from beamclaw_tools.settings import BrowserSettings

from .conftest import ADDRESS, Harness, tool_messages

pytestmark = pytest.mark.browser

FORM = """<html><head><title>Order</title></head><body><h1>Order a pizza</h1>
<form method="post" action="/order"><label>Topping <input name="topping"></label>
<button type="submit">Order</button></form></body></html>"""


@pytest.fixture
async def shop() -> AsyncIterator[str]:
    async def form(_: web.Request) -> web.Response:
        return web.Response(text=FORM, content_type="text/html")

    async def order(request: web.Request) -> web.Response:
        data = await request.post()
        body = f"<html><body><h1>Ordered: {data['topping']}</h1></body></html>"
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", form)
    app.router.add_post("/order", order)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


@pytest.fixture
async def pool(shop: str) -> AsyncIterator[BrowserPool]:
    made = open_browser_pool(BrowserSettings(allowed_hosts=[shop]))
    assert made is not None, "Chromium is required (apt-get install chromium)"
    yield made
    await made.close()


def _ref(messages: list[Message], role: str, name: str) -> str:
    last = [m for m in messages if m.role is Role.TOOL][-1].text
    found = re.search(rf'- {role} "{name}"[^\n]*\[ref=(\w+)\]', last)
    assert found, last
    return found.group(1)


def fill(messages: list[Message], _: CompletionOptions) -> CallTool:
    ref = _ref(messages, "textbox", "Topping")
    return CallTool("browser_fill_form", {"fields": [{"ref": ref, "value": "mushrooms"}]})


def submit(messages: list[Message], _: CompletionOptions) -> CallTool:
    return CallTool("browser_submit", {"ref": _ref(messages, "button", "Order")})


async def test_a_turn_orders_through_a_form_with_approval(
    make_harness: Callable[..., Any], shop: str, pool: BrowserPool
) -> None:
    h: Harness = await make_harness(
        [
            CallTool("browser_navigate", {"url": f"http://{shop}/"}),
            fill,
            submit,
            Reply("Ordered mushrooms."),
        ],
        decisions={"browser_submit": "yes"},
    )
    h.tools.register_many(browser_tools(pool))
    events, history = await h.turn("Order a mushroom pizza")
    assert isinstance(events[-1], TurnDone)
    assert events[-1].text == "Ordered mushrooms."
    asked = [e.tool for e in events if isinstance(e, ApprovalRequested)]
    assert asked == ["browser_submit"]  # navigating and filling did not ask
    results = tool_messages(history)
    assert [m.name for m in results] == ["browser_navigate", "browser_fill_form", "browser_submit"]
    assert not any(m.is_error for m in results), [m.text for m in results]
    assert "Ordered: mushrooms" in results[-1].text


async def test_a_refused_submission_sends_nothing(
    make_harness: Callable[..., Any], shop: str, pool: BrowserPool
) -> None:
    h: Harness = await make_harness(
        [
            CallTool("browser_navigate", {"url": f"http://{shop}/"}),
            submit,
            Reply("I did not order."),
        ],
        decisions={"browser_submit": "no"},
    )
    h.tools.register_many(browser_tools(pool))
    events, history = await h.turn("Order a pizza")
    assert isinstance(events[-1], TurnDone)
    results = tool_messages(history)
    assert results[-1].name == "browser_submit"
    assert "Ordered:" not in results[-1].text
    # the browser is still on the form: nothing was sent
    still = await h.tools.execute(
        ToolCall(id="check", name="browser_snapshot"),
        SessionRef(session_id=h.session_id, agent_id=ADDRESS.agent_id, workspace=h.workspace),
    )
    assert 'heading "Order a pizza"' in still.content


@pytest.mark.parametrize("chromium", ["found", "missing"])
async def test_the_gateway_offers_the_tools_only_with_chromium(
    beamclaw_home: Path, tmp_path: Path, chromium: str
) -> None:
    async with FakeOpenAIServer([FakeReply("hello")], repeat_last=True) as upstream:
        config = quiet_config()
        config.core.default_provider = "fake"
        config.core.providers = {
            "fake": ProviderSettings(kind="openai", base_url=upstream.base_url, model="m")
        }
        if chromium == "missing":
            config.tools.browser.executable_path = tmp_path / "no-chromium"
        async with (
            live_gateway(None, config) as gw,
            httpx.AsyncClient(base_url=gw.base_url, timeout=30) as client,
        ):
            r = await client.post(
                "/v1/chat/completions",
                json={"model": "beamclaw/default", "messages": [{"role": "user", "content": "hi"}]},
            )
            assert r.status_code == 200, r.text
        offered = {t["function"]["name"] for t in upstream.bodies[0]["tools"]}
    assert "web_fetch" in offered
    assert ("browser_navigate" in offered) is (chromium == "found")
    assert ("browser_submit" in offered) is (chromium == "found")
