"""/webhook/{source}: per-source secrets, fail closed, stripped secrets, 202."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from beamclaw_core.messages import Message
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.settings import WebhookSourceSettings
from beamclaw_obs import Secret

from .conftest import gateway_config, live_gateway


@pytest.fixture(autouse=True)
def _secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BC_TEST_HOOK_GH", "gh-secret")
    monkeypatch.setenv("BC_TEST_HOOK_FORM", "form-secret")


def webhook_config():
    config = gateway_config()
    config.gateway.webhooks = {
        "github": WebhookSourceSettings(secret=Secret(env="BC_TEST_HOOK_GH")),
        "forms": WebhookSourceSettings(
            secret=Secret(env="BC_TEST_HOOK_FORM"), header=None, body_field="token"
        ),
        "unset": WebhookSourceSettings(secret=Secret(env="BC_TEST_HOOK_MISSING")),
    }
    return config


async def _user_messages(gw, provider: ScriptedProvider, count: int) -> list[str]:
    for _ in range(300):
        if len(provider.calls) >= count:
            break
        await asyncio.sleep(0.01)
    texts: list[str] = []
    for call in provider.calls:
        user: list[Message] = [m for m in call.messages if m.role.value == "user"]
        texts.append(user[-1].text)
    return texts


async def test_header_secret_accepted_turn_runs_in_background() -> None:
    provider = ScriptedProvider([Reply("noted")])
    async with (
        live_gateway(provider, webhook_config()) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        r = await c.post(
            "/webhook/github",
            json={"action": "opened", "number": 7},
            headers={"X-Webhook-Secret": "gh-secret"},
        )
        texts = await _user_messages(gw, provider, 1)
        await gw.runtime.core.wait_idle(r.json()["session_id"])
        history = await gw.runtime.core.history(r.json()["session_id"])
    assert r.status_code == 202
    body = r.json()
    assert body["accepted"] is True and body["source"] == "github" and body["agent"] == "default"
    assert texts[0].startswith("[Webhook event from 'github']\n")
    assert json.loads(texts[0].split("\n", 1)[1]) == {"action": "opened", "number": 7}
    assert "gh-secret" not in texts[0]
    assert history[-1].text == "noted"


async def test_body_field_secret_is_stripped_before_the_agent_sees_it() -> None:
    provider = ScriptedProvider([Reply("ok")])
    async with (
        live_gateway(provider, webhook_config()) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        r = await c.post("/webhook/forms", json={"token": "form-secret", "name": "Ann"})
        header_only = await c.post(
            "/webhook/forms", json={"name": "x"}, headers={"X-Webhook-Secret": "form-secret"}
        )
        texts = await _user_messages(gw, provider, 1)
    assert r.status_code == 202
    assert header_only.status_code == 401  # this source takes the secret only in the body
    assert "form-secret" not in texts[0]
    assert json.loads(texts[0].split("\n", 1)[1]) == {"name": "Ann"}


async def test_fail_closed() -> None:
    provider = ScriptedProvider([])
    async with (
        live_gateway(provider, webhook_config()) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        unknown = await c.post(
            "/webhook/gitlab", json={}, headers={"X-Webhook-Secret": "gh-secret"}
        )
        missing = await c.post("/webhook/github", json={})
        wrong = await c.post("/webhook/github", json={}, headers={"X-Webhook-Secret": "nope"})
        unset = await c.post("/webhook/unset", json={}, headers={"X-Webhook-Secret": ""})
        bad_agent = await c.post(
            "/webhook/github?agent=ghost", json={}, headers={"X-Webhook-Secret": "gh-secret"}
        )
    assert unknown.status_code == 404
    assert (missing.status_code, wrong.status_code, unset.status_code) == (401, 401, 401)
    assert bad_agent.status_code == 404
    assert provider.calls == []


async def test_agent_query_routes_to_another_agent(beamclaw_home) -> None:
    from beamclaw_core.workspace import create_agent

    create_agent("ops", home=beamclaw_home)
    provider = ScriptedProvider([Reply("ops here")])
    async with (
        live_gateway(provider, webhook_config()) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        r = await c.post(
            "/webhook/github?agent=ops",
            content=b"plain text event",
            headers={"X-Webhook-Secret": "gh-secret"},
        )
        texts = await _user_messages(gw, provider, 1)
    assert r.json()["agent"] == "ops"
    assert texts[0] == "[Webhook event from 'github']\nplain text event"
