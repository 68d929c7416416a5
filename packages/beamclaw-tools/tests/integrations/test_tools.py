"""Each integration tool against the fake services: compact, paginated answers."""

from __future__ import annotations

import pytest

from beamclaw_tools import SessionRef
from beamclaw_tools.integrations import Integrations
from beamclaw_tools.integrations.testing import (
    NOTION_DATABASE_ID,
    NOTION_PAGE_ID,
    FakeIntegrationsServer,
)

from .conftest import NOTION_TOKEN, SLACK_TOKEN, connect_google
from .helpers import call

WEEK = {"time_min": "2026-11-27T00:00:00+01:00", "time_max": "2026-11-30T00:00:00+01:00"}


@pytest.fixture
async def google(hub: Integrations) -> Integrations:
    await connect_google(hub)
    return hub


@pytest.fixture
async def notion(hub: Integrations) -> Integrations:
    await hub.save_pasted("notion", NOTION_TOKEN)
    return hub


@pytest.fixture
async def slack(hub: Integrations) -> Integrations:
    await hub.save_pasted("slack", SLACK_TOKEN)
    return hub


async def test_the_tool_set_is_read_only_and_complete(hub: Integrations) -> None:
    names = {t.definition.name for t in hub.tools()}
    assert names == {
        "gmail_search",
        "gmail_read",
        "gmail_labels",
        "calendar_events",
        "calendar_event",
        "calendar_freebusy",
        "notion_search",
        "notion_read_page",
        "notion_query_database",
        "slack_channels",
        "slack_history",
        "slack_search",
        "integrations_connect",
        "integrations_status",
    }
    assert all(t.definition.min_autonomy == "read_only" for t in hub.tools())
    assert all(t.definition.source == "integrations" for t in hub.tools())


async def test_gmail_search_pages_through_compact_summaries(
    google: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    first = await call(google, session, "gmail_search", query="", page_size=2)
    assert not first.is_error, first.content
    assert "Dinner on Friday?" in first.content and "anna@example.org" in first.content
    assert "Your statement" in first.content
    assert "Project kickoff" not in first.content
    assert first.structured is not None
    cursor = first.structured["next_cursor"]
    assert f"next_cursor: {cursor}" in first.content
    second = await call(google, session, "gmail_search", query="", page_size=2, cursor=cursor)
    assert "Project kickoff notes" in second.content and "next_cursor" not in second.content
    metadata = [r for r in fake.requests_to("gmail") if r.query.get("format") == "metadata"]
    assert metadata  # summaries come from metadata, not whole messages
    assert "Hi!" not in first.content  # no full bodies in a search answer


async def test_gmail_search_passes_the_query(google: Integrations, session: SessionRef) -> None:
    result = await call(google, session, "gmail_search", query="from:anna is:unread")
    assert "Dinner on Friday?" in result.content and "statement" not in result.content
    empty = await call(google, session, "gmail_search", query="from:nobody")
    assert not empty.is_error and "no messages match" in empty.content


async def test_gmail_read_plain_html_and_multipart(
    google: Integrations, session: SessionRef
) -> None:
    plain = await call(google, session, "gmail_read", message_id="18c1a0001")
    assert "From: Anna Schmidt <anna@example.org>" in plain.content
    assert "Subject: Dinner on Friday?" in plain.content
    assert "I booked a table at 7." in plain.content
    assert "Labels: INBOX, UNREAD" in plain.content
    html = await call(google, session, "gmail_read", message_id="18c1a0002")
    assert "**November**" in html.content and "track()" not in html.content
    multi = await call(google, session, "gmail_read", message_id="18c1a0003")
    assert "Cc: team@example.org" in multi.content
    assert "2. Demo on 4 December" in multi.content and "<ol>" not in multi.content
    missing = await call(google, session, "gmail_read", message_id="nope")
    assert missing.is_error and "HTTP 404" in missing.content


async def test_gmail_labels(google: Integrations, session: SessionRef) -> None:
    result = await call(google, session, "gmail_labels")
    assert "- Work (id=Label_1, user)" in result.content
    assert "- INBOX (id=INBOX, system)" in result.content


async def test_calendar_events_in_a_range(google: Integrations, session: SessionRef) -> None:
    result = await call(google, session, "calendar_events", **WEEK)
    assert not result.is_error, result.content
    lines = result.content.splitlines()
    assert "Europe/Berlin" in lines[0]
    assert "2026-11-27T09:00:00+01:00 → 2026-11-27T09:15:00+01:00 | Team standup" in lines[1]
    assert "at Hauptstraße 5, Berlin" in lines[2]
    assert "2026-11-28 → 2026-11-29 | PyCon planning day" in lines[3]
    paged = await call(google, session, "calendar_events", page_size=1, **WEEK)
    assert paged.structured is not None and paged.structured["next_cursor"]
    rest = await call(
        google, session, "calendar_events", cursor=paged.structured["next_cursor"], **WEEK
    )
    assert "Dentist" in rest.content and "Team standup" not in rest.content
    none = await call(
        google,
        session,
        "calendar_events",
        time_min="2027-01-01T00:00:00Z",
        time_max="2027-01-02T00:00:00Z",
    )
    assert "no events" in none.content


async def test_calendar_event_details(google: Integrations, session: SessionRef) -> None:
    result = await call(google, session, "calendar_event", event_id="evt001")
    assert "Title: Team standup" in result.content
    assert "Organiser: Bob Builder" in result.content
    assert "Anna (tentative)" in result.content
    assert "Meet: https://meet.google.com/abc-defg-hij" in result.content
    assert "Agenda: blockers, demo prep." in result.content


async def test_calendar_freebusy(google: Integrations, session: SessionRef) -> None:
    result = await call(
        google,
        session,
        "calendar_freebusy",
        time_min="2026-11-27T08:00:00+01:00",
        time_max="2026-11-27T12:00:00+01:00",
        calendars=["primary", "nobody@example.org"],
    )
    assert "primary: busy" in result.content
    assert "2026-11-27T09:00:00+01:00 → 2026-11-27T09:15:00+01:00" in result.content
    assert "Dentist" not in result.content and "14:00" not in result.content
    assert "nobody@example.org: cannot read (notFound)" in result.content


async def test_notion_search_and_database_rows(notion: Integrations, session: SessionRef) -> None:
    found = await call(notion, session, "notion_search", query="trip")
    assert f"page: Trip plans | id={NOTION_PAGE_ID}" in found.content
    assert "Trip budget" in found.content and "Reading list" not in found.content
    dbs = await call(notion, session, "notion_search", kind="database")
    assert f"database: Reading list | id={NOTION_DATABASE_ID}" in dbs.content
    paged = await call(notion, session, "notion_search", page_size=1)
    assert paged.structured is not None and paged.structured["next_cursor"]

    rows = await call(notion, session, "notion_query_database", database_id=NOTION_DATABASE_ID)
    assert "- Dune (id=r1)" in rows.content
    assert "Author: Frank Herbert | Status: Reading | Tags: sci-fi | Done: no" in rows.content
    assert "Tags: fantasy, short" in rows.content
    done = await call(
        notion,
        session,
        "notion_query_database",
        database_id=NOTION_DATABASE_ID,
        filter={"property": "Done", "checkbox": {"equals": True}},
    )
    assert "Piranesi" in done.content and "Dune" not in done.content


async def test_notion_page_as_markdown_in_parts(
    notion: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    whole = await call(notion, session, "notion_read_page", page_id=NOTION_PAGE_ID)
    expected = "\n".join(
        [
            "# Lisbon in March",
            "",
            "Flights are **booked**",
            "",
            "- Alfama walk",
            "- Tram 28",
            "",
            "1. Pack",
            "2. Go",
            "",
            "- [x] Book hotel",
            "",
            "```python",
            "print('olá')",
            "```",
            "",
            "- Packing list (nested blocks: block id=b9)",
            "",
            "📄 Restaurants (page id=b10)",
            "",
            "[synced_block block]",
        ]
    )
    assert whole.content == expected
    fake.data.notion_max_page_size = 4
    part = await call(notion, session, "notion_read_page", page_id=NOTION_PAGE_ID)
    assert "Tram 28" in part.content and "Pack" not in part.content
    cursor = part.content.rsplit("next_cursor: ", 1)[1]
    rest = await call(notion, session, "notion_read_page", page_id=NOTION_PAGE_ID, cursor=cursor)
    assert rest.content.startswith("1. Pack")
    missing = await call(notion, session, "notion_read_page", page_id="not-shared")
    assert missing.is_error and "shared with your integration" in missing.content


async def test_slack_channels_history_and_search(slack: Integrations, session: SessionRef) -> None:
    channels = await call(slack, session, "slack_channels", page_size=2)
    assert "- #general id=C0GENERAL | 42 members | Company-wide" in channels.content
    assert "project-x" not in channels.content
    assert channels.structured is not None
    more = await call(slack, session, "slack_channels", cursor=channels.structured["next_cursor"])
    assert "- #project-x (private) id=G0PROJX" in more.content

    history = await call(slack, session, "slack_history", channel="C0GENERAL", page_size=2)
    assert "U0ANNA: Office closed on Friday" in history.content
    assert "Deploy at 3pm today (2 replies)" in history.content
    assert "Welcome" not in history.content and "next_cursor: " in history.content

    found = await call(slack, session, "slack_search", query="deploy", page_size=1)
    assert "#general" in found.content or "#project-x" in found.content
    assert "https://acme.slack.com/archives/" in found.content
    assert "page 1 of 2 (2 matches); next page: page=2" in found.content
    missing = await call(slack, session, "slack_history", channel="C0NOPE")
    assert missing.is_error and "channel_not_found" in missing.content


async def test_results_pass_the_scrubber(
    slack: Integrations, session: SessionRef, fake: FakeIntegrationsServer
) -> None:
    leaked = f"my token is {SLACK_TOKEN} oops"
    fake.data.channel_messages["C0RANDOM"] = [
        {"type": "message", "user": "U0ANNA", "text": leaked, "ts": "1795766400.000300"}
    ]
    result = await call(slack, session, "slack_history", channel="C0RANDOM")
    assert "my token is" in result.content and SLACK_TOKEN not in result.content
