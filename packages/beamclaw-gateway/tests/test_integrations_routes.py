"""The integrations' browser routes on a live gateway: Google's OAuth callback (PKCE,
end to end from the agent's tool call to a calendar answer) and the token paste form."""

from __future__ import annotations

import re
import stat

import httpx

from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_obs import beamclaw_home
from beamclaw_tools.integrations import Integrations
from beamclaw_tools.integrations.testing import FakeIntegrationsServer

from .conftest import LiveGateway, gateway_config, live_gateway

RANGE = {"time_min": "2026-11-27T00:00:00+01:00", "time_max": "2026-11-28T00:00:00+01:00"}
NOTION_TOKEN = "ntn_fake_notion_token_0123456789abcdef"


def chat(text: str) -> dict[str, object]:
    return {"model": "beamclaw/default", "messages": [{"role": "user", "content": text}]}


def _config(fake: FakeIntegrationsServer):
    config = gateway_config()
    config.tools.integrations = fake.settings()
    return config


def _hub(gw: LiveGateway) -> Integrations:
    system = gw.runtime.system
    assert system is not None and system.integrations is not None
    # the browser reaches this gateway on its test port
    system.integrations.settings.redirect_base_url = gw.base_url
    return system.integrations


async def test_connect_my_calendar_end_to_end_through_the_callback() -> None:
    provider = ScriptedProvider(
        [
            CallTool("integrations_connect", {"service": "calendar"}),
            Reply("Open the link to connect your calendar."),
            CallTool("calendar_events", RANGE),
            Reply("You have a standup at 9."),
        ]
    )
    async with (
        FakeIntegrationsServer() as fake,
        live_gateway(provider, _config(fake)) as gw,
        httpx.AsyncClient(base_url=gw.base_url, timeout=30) as c,
        httpx.AsyncClient(follow_redirects=True, timeout=30) as browser,
    ):
        _hub(gw)
        headers = {"X-Session-Id": "s-int"}
        await c.post("/v1/chat/completions", json=chat("connect my calendar"), headers=headers)
        tool_answer = provider.calls[1].messages[-1].text
        link = re.search(r"http://\S+/oauth/authorize\?\S+", tool_answer)
        assert link is not None, tool_answer
        consented = await browser.get(link.group(0))  # consent → 302 → gateway callback
        assert consented.status_code == 200, consented.text
        assert "Google is connected" in consented.text
        assert str(consented.url).startswith(gw.base_url + "/integrations/google/callback?")
        assert consented.headers["cache-control"] == "no-store"

        await c.post("/v1/chat/completions", json=chat("what is on tomorrow?"), headers=headers)
        events_answer = provider.calls[3].messages[-1].text
        replay = await browser.get(str(consented.url))
    assert "Team standup" in events_answer and "Dentist" in events_answer
    assert replay.status_code == 400 and "unknown, used or expired" in replay.text
    token_file = beamclaw_home() / "integrations" / "tokens.enc"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert b"ya29." not in token_file.read_bytes()
    key_file = beamclaw_home() / "secrets" / "integrations.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


async def test_a_refused_consent_or_a_forged_state_is_a_clear_page() -> None:
    async with (
        FakeIntegrationsServer() as fake,
        live_gateway(ScriptedProvider([]), _config(fake)) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        denied = await c.get("/integrations/google/callback", params={"error": "access_denied"})
        forged = await c.get(
            "/integrations/google/callback", params={"state": "forged", "code": "4/x"}
        )
        incomplete = await c.get("/integrations/google/callback")
    assert denied.status_code == 400 and "access_denied" in denied.text
    assert forged.status_code == 400 and "unknown, used or expired" in forged.text
    assert incomplete.status_code == 400


async def test_the_paste_form_checks_the_token_and_is_used_once() -> None:
    async with (
        FakeIntegrationsServer() as fake,
        live_gateway(ScriptedProvider([]), _config(fake)) as gw,
        httpx.AsyncClient(timeout=30) as browser,
    ):
        hub = _hub(gw)
        link = hub.paste_link("notion")
        form = await browser.get(link)
        state = link.rsplit("state=", 1)[1]
        wrong = await browser.post(link, data={"state": state, "token": "ntn_wrong_0000000000"})
        right = await browser.post(link, data={"state": state, "token": NOTION_TOKEN})
        again = await browser.get(link)
        other = await browser.get(f"{gw.base_url}/integrations/slack/paste?state={state}")
        stored = hub.store.get("notion")
    assert form.status_code == 200 and "type='password'" in form.text
    assert wrong.status_code == 400 and "please reconnect" in wrong.text
    assert "ntn_wrong_0000000000" not in wrong.text and "name='token'" in wrong.text
    assert right.status_code == 200 and "Notion is connected" in right.text
    assert "(Anna&#x27;s Notion)" in right.text
    assert again.status_code == 400 and other.status_code == 400
    assert stored is not None and stored.account == "Anna's Notion"


async def test_routes_answer_404_when_integrations_are_off() -> None:
    async with (
        live_gateway(ScriptedProvider([])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        callback = await c.get("/integrations/google/callback", params={"state": "s", "code": "c"})
        form = await c.get("/integrations/notion/paste", params={"state": "s"})
        system = gw.runtime.system
        assert system is not None
        offered = {d.name for d in system.tools.definitions()}
    assert callback.status_code == 404 and form.status_code == 404
    assert "gmail_search" not in offered and "integrations_connect" not in offered
