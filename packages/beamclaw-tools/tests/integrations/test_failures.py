"""Bad answers: rate limits, garbage, errors, missing and refused tokens."""

from __future__ import annotations

import pytest

from beamclaw_tools import SessionRef
from beamclaw_tools.integrations import Integrations
from beamclaw_tools.integrations.testing import FakeFault, FakeIntegrationsServer

from .conftest import NOTION_TOKEN, SLACK_TOKEN, Sleeps, connect_google
from .helpers import call

RATE_LIMITED = FakeFault(
    429,
    {"error": {"code": 429, "message": "Rate Limit Exceeded", "status": "RESOURCE_EXHAUSTED"}},
    headers={"Retry-After": "2"},
)


@pytest.fixture
async def google(hub: Integrations) -> Integrations:
    await connect_google(hub)
    return hub


async def test_not_connected_says_how_to_connect(hub: Integrations, session: SessionRef) -> None:
    result = await call(hub, session, "gmail_labels")
    assert result.is_error
    assert result.content.startswith("google is not connected")
    assert "beamclaw integrations connect google" in result.content


async def test_429_is_retried_after_retry_after(
    google: Integrations, session: SessionRef, fake: FakeIntegrationsServer, sleeps: Sleeps
) -> None:
    fake.fail("gmail", RATE_LIMITED, RATE_LIMITED)
    result = await call(google, session, "gmail_labels")
    assert not result.is_error, result.content
    assert "Work" in result.content
    assert sleeps.waits == [2.0, 2.0]
    assert sum(r.path.endswith("/labels") for r in fake.requests_to("gmail")) == 3


async def test_429_past_the_retry_budget_is_a_clear_message(
    google: Integrations, session: SessionRef, fake: FakeIntegrationsServer, sleeps: Sleeps
) -> None:
    fake.fail("calendar", *([RATE_LIMITED] * 5))
    result = await call(
        google,
        session,
        "calendar_freebusy",
        time_min="2026-11-27T00:00:00Z",
        time_max="2026-11-28T00:00:00Z",
    )
    assert result.is_error
    assert "google is rate limiting requests (it asks to wait 2 s)" in result.content
    assert "gave up after 3 attempts" in result.content
    assert len(fake.requests_to("calendar")) == 3  # max_retries = 2
    assert sleeps.waits == [2.0, 2.0]


async def test_a_retry_after_too_long_is_not_waited_for(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer, sleeps: Sleeps
) -> None:
    await hub.save_pasted("notion", NOTION_TOKEN)
    fake.fail(
        "notion",
        FakeFault(
            429,
            {"object": "error", "status": 429, "code": "rate_limited", "message": "slow down"},
            headers={"Retry-After": "3600"},
        ),
    )
    result = await call(hub, session, "notion_search", query="trip")
    assert result.is_error and "wait 3600 s" in result.content
    assert sleeps.waits == []


async def test_slack_ratelimited_is_honoured_too(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer, sleeps: Sleeps
) -> None:
    await hub.save_pasted("slack", SLACK_TOKEN)
    fake.fail(
        "slack", FakeFault(429, {"ok": False, "error": "ratelimited"}, headers={"Retry-After": "1"})
    )
    result = await call(hub, session, "slack_channels")
    assert not result.is_error and "#general" in result.content
    assert sleeps.waits == [1.0]


async def test_garbage_is_a_clear_message(
    google: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    fake.fail("gmail", FakeFault.garbage())
    result = await call(google, session, "gmail_labels")
    assert result.is_error
    assert "google answered an unreadable response: expected a JSON object" in result.content


async def test_server_errors_are_reported_with_their_message(
    google: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    fake.fail(
        "gmail",
        FakeFault(
            503, {"error": {"code": 503, "message": "The service is currently unavailable."}}
        ),
    )
    result = await call(google, session, "gmail_search", query="x")
    assert result.is_error
    assert "google answered HTTP 503: The service is currently unavailable." in result.content


async def test_a_wrong_notion_token_asks_to_reconnect(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    await hub.save_pasted("notion", NOTION_TOKEN)
    fake.data.notion_tokens.clear()  # the integration was removed in Notion
    result = await call(hub, session, "notion_read_page", page_id="x")
    assert result.is_error
    assert "notion refused the stored token (API token is invalid.)" in result.content
    assert "please reconnect" in result.content
    assert NOTION_TOKEN not in result.content


async def test_a_revoked_slack_token_asks_to_reconnect(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    await hub.save_pasted("slack", SLACK_TOKEN)
    fake.data.slack_revoked.add(SLACK_TOKEN)
    result = await call(hub, session, "slack_search", query="deploy")
    assert result.is_error and "slack refused the stored token (token_revoked)" in result.content


async def test_an_expired_google_token_without_refresh_asks_to_reconnect(
    google: Integrations, session: SessionRef
) -> None:
    token = google.store.get("google")
    assert token is not None
    google.store.put(token.model_copy(update={"refresh_token": None, "expires_at": 1.0}))
    result = await call(google, session, "gmail_labels")
    assert result.is_error
    assert "no refresh token" in result.content and "reconnect" in result.content


async def test_an_unreachable_service_is_a_clear_message(
    hub: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    await hub.save_pasted("slack", SLACK_TOKEN)
    await fake.stop()
    result = await call(hub, session, "slack_channels")
    assert result.is_error and "cannot reach slack: ConnectError" in result.content


async def test_a_grant_missing_a_scope_asks_to_reconnect(
    google: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    scopes = FakeFault(
        403,
        {
            "error": {
                "code": 403,
                "message": "Request had insufficient authentication scopes.",
                "status": "PERMISSION_DENIED",
            }
        },
    )
    fake.fail("calendar", scopes, scopes)  # a refresh (tried once) does not add a scope
    result = await call(google, session, "calendar_event", event_id="evt001")
    assert result.is_error
    assert "insufficient authentication scopes" in result.content
    assert "please reconnect" in result.content
