"""Connecting in the conversation: links, pasted tokens, refresh, status and revocation."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from beamclaw_obs import get_emitter
from beamclaw_tools import SessionRef
from beamclaw_tools.integrations import Integrations, OAuthError, ReconnectRequiredError
from beamclaw_tools.integrations.testing import FakeIntegrationsServer

from .conftest import NOTION_TOKEN, SLACK_TOKEN, EventLog, connect_google, consent
from .helpers import call


async def test_connect_my_calendar_answers_a_pkce_link_to_the_gateway_callback(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    result = await call(hub, session, "integrations_connect", service="my calendar")
    assert result.is_error  # "my calendar" is not a service name …
    result = await call(hub, session, "integrations_connect", service="calendar")
    assert not result.is_error, result.content
    link = result.content.splitlines()[-1]
    query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert link.startswith(fake.base_url + "/oauth/authorize?")
    assert query["redirect_uri"] == "http://127.0.0.1:18800/integrations/google/callback"
    assert query["code_challenge_method"] == "S256"
    assert "gmail.readonly" in query["scope"] and "calendar.readonly" in query["scope"]
    state, code = await consent(link)
    assert state == query["state"]
    await hub.complete_google(state, code)
    status = await call(hub, session, "integrations_status")
    assert "- google: connected as me@example.org" in status.content
    assert "refreshed automatically" in status.content
    assert "- notion: not connected" in status.content
    # the state was used once: replaying the callback fails clearly
    with pytest.raises(OAuthError, match="unknown, used or expired"):
        await hub.complete_google(state, code)


async def test_a_wrong_verifier_is_refused_by_google(
    hub: Integrations, fake: FakeIntegrationsServer, home: Path
) -> None:
    link_a = hub.connect_instructions("google").splitlines()[-1]
    link_b = hub.connect_instructions("google").splitlines()[-1]
    state_a, _ = await consent(link_a)
    _, code_b = await consent(link_b)
    with pytest.raises(OAuthError, match="invalid_grant"):  # another consent's code
        await hub.complete_google(state_a, code_b)
    assert hub.store.get("google") is None


async def test_an_unconfigured_google_client_says_what_to_set(
    fake: FakeIntegrationsServer, home: Path, session: SessionRef
) -> None:
    settings = fake.settings()
    bare = settings.model_copy(
        update={"google": settings.google.model_copy(update={"client_id": None})}
    )
    hub = Integrations(bare, home=home)
    result = await call(hub, session, "integrations_connect", service="gmail")
    assert result.is_error and "client_id" in result.content


async def test_tokens_are_refreshed_before_they_expire(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    fake.data.google.expires_in = 60  # inside the 300 s refresh margin
    await connect_google(hub)
    first = hub.store.get("google")
    assert first is not None

    def refreshes() -> int:
        return sum(b"grant_type=refresh_token" in r.body for r in fake.requests_to("oauth"))

    before = refreshes()
    result = await call(hub, session, "gmail_labels")
    assert not result.is_error, result.content
    assert refreshes() == before + 1
    second = hub.store.get("google")
    assert second is not None and second.access_token != first.access_token
    assert second.refresh_token == first.refresh_token
    used = fake.requests_to("gmail")[-1].headers["authorization"]
    assert used == f"Bearer {second.access_token.get_secret_value()}"


async def test_an_access_token_refused_mid_life_is_refreshed_once(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    await connect_google(hub)
    token = hub.store.get("google")
    assert token is not None
    fake.data.google.access[token.access_token.get_secret_value()] = time.time() - 1
    result = await call(hub, session, "gmail_labels")
    assert not result.is_error, result.content
    assert sum(b"grant_type=refresh_token" in r.body for r in fake.requests_to("oauth")) == 1


async def test_a_revoked_grant_asks_to_reconnect(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    await connect_google(hub)
    token = hub.store.get("google")
    assert token is not None and token.refresh_token is not None
    fake.data.google.revoked.update(
        {token.refresh_token.get_secret_value(), token.access_token.get_secret_value()}
    )
    result = await call(
        hub,
        session,
        "calendar_events",
        time_min="2026-11-27T00:00:00Z",
        time_max="2026-11-28T00:00:00Z",
    )
    assert result.is_error
    assert "google refused the stored token" in result.content
    assert "please reconnect" in result.content


async def test_revoke_tells_google_and_forgets_the_token(
    hub: Integrations, fake: FakeIntegrationsServer
) -> None:
    await connect_google(hub)
    token = hub.store.get("google")
    assert token is not None and token.refresh_token is not None
    outcome = await hub.revoke("google")
    assert outcome.removed and outcome.remote == "confirmed"
    assert token.refresh_token.get_secret_value() in fake.data.google.revoked
    assert hub.store.get("google") is None
    assert (await hub.revoke("google")).removed is False


async def test_pasted_tokens_go_through_a_one_time_form_never_the_chat(
    hub: Integrations, session: SessionRef, event_log: EventLog
) -> None:
    how = await call(hub, session, "integrations_connect", service="notion")
    assert "notion.so/profile/integrations" in how.content
    assert "beamclaw integrations connect notion" in how.content
    link = next(line for line in how.content.splitlines() if "/paste?state=" in line)
    assert link.startswith("http://127.0.0.1:18800/integrations/notion/paste?state=")
    state = parse_qs(urlsplit(link).query)["state"][0]
    assert hub.paste_form_valid("notion", state)
    assert not hub.paste_form_valid("slack", state)  # a link is for one service

    with pytest.raises(ReconnectRequiredError):
        await hub.complete_paste("notion", state, "ntn_wrong_token_000000000")
    assert hub.store.get("notion") is None
    assert hub.paste_form_valid("notion", state)  # a typo can be retried
    stored = await hub.complete_paste("notion", state, NOTION_TOKEN)
    assert stored.account == "Anna's Notion"
    assert not hub.paste_form_valid("notion", state)  # used once
    with pytest.raises(OAuthError, match="unknown, used or expired"):
        await hub.complete_paste("notion", state, NOTION_TOKEN)

    slack = (await call(hub, session, "integrations_connect", service="slack")).content
    slack_state = parse_qs(urlsplit(slack.split("\n")[2]).query)["state"][0]
    await hub.complete_paste("slack", slack_state, SLACK_TOKEN)
    status = await call(hub, session, "integrations_status")
    assert "- notion: connected as Anna's Notion" in status.content
    assert "- slack: connected as anna @ Acme" in status.content
    history = await call(hub, session, "slack_history", channel="C0GENERAL")
    assert not history.is_error
    get_emitter().flush()
    logged = repr([e.data for e in event_log.events])
    assert "tool_call_result" in repr([e.type for e in event_log.events])
    assert SLACK_TOKEN not in logged and NOTION_TOKEN not in logged


async def test_slack_revoke_uses_auth_revoke(
    hub: Integrations, fake: FakeIntegrationsServer
) -> None:
    await hub.save_pasted("slack", SLACK_TOKEN)
    outcome = await hub.revoke("slack")
    assert outcome.remote == "confirmed" and SLACK_TOKEN in fake.data.slack_revoked
    await hub.save_pasted("notion", NOTION_TOKEN)
    assert (await hub.revoke("notion")).remote == "not supported"
