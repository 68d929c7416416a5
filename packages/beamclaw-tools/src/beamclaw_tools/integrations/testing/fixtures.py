"""The fake accounts' content and token state (what the fake servers serve).

Shapes follow the services' documented resources: Gmail ``Message``/``Label``, Calendar
``Event``, Notion page/database/block objects, Slack conversation and message objects.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any


def b64(text: str) -> str:
    """Gmail's body encoding: base64url without padding."""
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def _headers(**values: str) -> list[dict[str, str]]:
    return [{"name": k.replace("_", "-"), "value": v} for k, v in values.items()]


def gmail_messages() -> list[dict[str, Any]]:
    return [
        {
            "id": "18c1a0001",
            "threadId": "18c1a0001",
            "labelIds": ["INBOX", "UNREAD"],
            "snippet": "Are you free on Friday evening? I booked a table at 7.",
            "internalDate": "1795766400000",
            "payload": {
                "mimeType": "text/plain",
                "headers": _headers(
                    From="Anna Schmidt <anna@example.org>",
                    To="me@example.org",
                    Subject="Dinner on Friday?",
                    Date="Wed, 25 Nov 2026 18:02:11 +0100",
                ),
                "body": {
                    "size": 80,
                    "data": b64(
                        "Hi!\n\nAre you free on Friday evening? I booked a table at 7.\n\nAnna"
                    ),
                },
            },
        },
        {
            "id": "18c1a0002",
            "threadId": "18c1a0002",
            "labelIds": ["INBOX", "CATEGORY_UPDATES"],
            "snippet": "Your November statement is ready",
            "internalDate": "1795680000000",
            "payload": {
                "mimeType": "text/html",
                "headers": _headers(
                    From="Example Bank <noreply@bank.example>",
                    To="me@example.org",
                    Subject="Your statement",
                    Date="Tue, 24 Nov 2026 08:00:00 +0000",
                ),
                "body": {
                    "size": 120,
                    "data": b64(
                        "<html><body><h1>Statement ready</h1><p>Your <b>November</b> "
                        "statement is ready.</p><script>track()</script></body></html>"
                    ),
                },
            },
        },
        {
            "id": "18c1a0003",
            "threadId": "18c1a0003",
            "labelIds": ["Label_1"],
            "snippet": "Notes from the project kickoff",
            "internalDate": "1795593600000",
            "payload": {
                "mimeType": "multipart/alternative",
                "headers": _headers(
                    From="Bob Builder <bob@example.org>",
                    To="me@example.org",
                    Cc="team@example.org",
                    Subject="Project kickoff notes",
                    Date="Mon, 23 Nov 2026 14:30:00 +0000",
                ),
                "body": {"size": 0},
                "parts": [
                    {
                        "partId": "0",
                        "mimeType": "text/plain",
                        "body": {"size": 40, "data": b64("1. Scope agreed\n2. Demo on 4 December")},
                    },
                    {
                        "partId": "1",
                        "mimeType": "text/html",
                        "body": {"size": 60, "data": b64("<ol><li>Scope agreed</li></ol>")},
                    },
                ],
            },
        },
    ]


GMAIL_LABELS: list[dict[str, Any]] = [
    {"id": "INBOX", "name": "INBOX", "type": "system"},
    {"id": "UNREAD", "name": "UNREAD", "type": "system"},
    {"id": "Label_1", "name": "Work", "type": "user"},
]


def calendar_events() -> list[dict[str, Any]]:
    return [
        {
            "kind": "calendar#event",
            "id": "evt001",
            "status": "confirmed",
            "summary": "Team standup",
            "description": "Daily sync. Agenda: blockers, demo prep.",
            "start": {"dateTime": "2026-11-27T09:00:00+01:00", "timeZone": "Europe/Berlin"},
            "end": {"dateTime": "2026-11-27T09:15:00+01:00", "timeZone": "Europe/Berlin"},
            "organizer": {"email": "bob@example.org", "displayName": "Bob Builder"},
            "attendees": [
                {"email": "me@example.org", "self": True, "responseStatus": "accepted"},
                {"email": "anna@example.org", "displayName": "Anna", "responseStatus": "tentative"},
            ],
            "hangoutLink": "https://meet.google.com/abc-defg-hij",
        },
        {
            "kind": "calendar#event",
            "id": "evt002",
            "status": "confirmed",
            "summary": "Dentist",
            "location": "Hauptstraße 5, Berlin",
            "start": {"dateTime": "2026-11-27T14:00:00+01:00"},
            "end": {"dateTime": "2026-11-27T15:00:00+01:00"},
        },
        {
            "kind": "calendar#event",
            "id": "evt003",
            "status": "confirmed",
            "summary": "PyCon planning day",
            "start": {"date": "2026-11-28"},
            "end": {"date": "2026-11-29"},
        },
    ]


def _title(text: str) -> dict[str, Any]:
    return {
        "id": "title",
        "type": "title",
        "title": [
            {"type": "text", "plain_text": text, "text": {"content": text}, "annotations": {}}
        ],
    }


def _rich(text: str, **annotations: bool) -> list[dict[str, Any]]:
    return [
        {
            "type": "text",
            "text": {"content": text, "link": None},
            "plain_text": text,
            "annotations": annotations,
            "href": None,
        }
    ]


def _block(block_id: str, kind: str, has_children: bool = False, **body: Any) -> dict[str, Any]:
    return {
        "object": "block",
        "id": block_id,
        "type": kind,
        "has_children": has_children,
        "archived": False,
        kind: body,
    }


NOTION_PAGE_ID = "59833787-2cf9-4fdf-8782-e53db20768a5"
NOTION_DATABASE_ID = "d9824bdc-8445-4327-be8b-5b47500af6ce"


def notion_pages() -> list[dict[str, Any]]:
    return [
        {
            "object": "page",
            "id": NOTION_PAGE_ID,
            "last_edited_time": "2026-11-20T10:00:00.000Z",
            "url": "https://www.notion.so/Trip-plans-598337872cf94fdf8782e53db20768a5",
            "properties": {"title": _title("Trip plans")},
        },
        {
            "object": "database",
            "id": NOTION_DATABASE_ID,
            "last_edited_time": "2026-11-21T10:00:00.000Z",
            "title": _rich("Reading list"),
            "properties": {},
        },
        {
            "object": "page",
            "id": "0a1b2c3d-0000-4000-8000-000000000001",
            "last_edited_time": "2026-11-19T10:00:00.000Z",
            "properties": {"Name": _title("Trip budget")},
        },
    ]


def notion_blocks() -> list[dict[str, Any]]:
    return [
        _block("b1", "heading_1", rich_text=_rich("Lisbon in March")),
        _block(
            "b2",
            "paragraph",
            rich_text=_rich(
                "Flights are ",
            )
            + _rich("booked", bold=True),
        ),
        _block("b3", "bulleted_list_item", rich_text=_rich("Alfama walk")),
        _block("b4", "bulleted_list_item", rich_text=_rich("Tram 28")),
        _block("b5", "numbered_list_item", rich_text=_rich("Pack")),
        _block("b6", "numbered_list_item", rich_text=_rich("Go")),
        _block("b7", "to_do", rich_text=_rich("Book hotel"), checked=True),
        _block("b8", "code", rich_text=_rich("print('olá')"), language="python"),
        _block("b9", "toggle", has_children=True, rich_text=_rich("Packing list")),
        _block("b10", "child_page", title="Restaurants"),
        _block("b11", "synced_block", synced_from=None),
    ]


def notion_rows() -> list[dict[str, Any]]:
    def row(
        row_id: str, name: str, author: str, status: str, tags: list[str], done: bool
    ) -> dict[str, Any]:
        return {
            "object": "page",
            "id": row_id,
            "parent": {"type": "database_id", "database_id": NOTION_DATABASE_ID},
            "properties": {
                "Name": _title(name),
                "Author": {"id": "a", "type": "rich_text", "rich_text": _rich(author)},
                "Status": {
                    "id": "s",
                    "type": "select",
                    "select": {"id": "x", "name": status, "color": "green"},
                },
                "Tags": {
                    "id": "t",
                    "type": "multi_select",
                    "multi_select": [{"id": t, "name": t} for t in tags],
                },
                "Done": {"id": "d", "type": "checkbox", "checkbox": done},
            },
        }

    return [
        row("r1", "Dune", "Frank Herbert", "Reading", ["sci-fi"], False),
        row("r2", "Piranesi", "Susanna Clarke", "Done", ["fantasy", "short"], True),
        row("r3", "The Overstory", "Richard Powers", "Queued", [], False),
    ]


def slack_channels() -> list[dict[str, Any]]:
    return [
        {
            "id": "C0GENERAL",
            "name": "general",
            "is_channel": True,
            "is_private": False,
            "num_members": 42,
            "topic": {"value": "Company-wide"},
        },
        {
            "id": "C0RANDOM",
            "name": "random",
            "is_channel": True,
            "is_private": False,
            "num_members": 40,
            "topic": {"value": ""},
        },
        {
            "id": "G0PROJX",
            "name": "project-x",
            "is_channel": True,
            "is_private": True,
            "num_members": 5,
            "topic": {"value": "Ship it"},
        },
    ]


def slack_messages() -> dict[str, list[dict[str, Any]]]:
    return {
        "C0GENERAL": [
            {
                "type": "message",
                "user": "U0ANNA",
                "text": "Office closed on Friday",
                "ts": "1795766400.000200",
            },
            {
                "type": "message",
                "user": "U0BOB",
                "text": "Deploy at 3pm today",
                "ts": "1795762800.000100",
                "reply_count": 2,
            },
            {
                "type": "message",
                "user": "U0ANNA",
                "text": "Welcome everyone",
                "ts": "1795759200.000100",
            },
        ],
        "G0PROJX": [
            {
                "type": "message",
                "user": "U0BOB",
                "text": "Demo on 4 December, deploy before",
                "ts": "1795760000.000100",
            },
        ],
    }


@dataclass
class GoogleState:
    """The fake Google's OAuth client and token bookkeeping."""

    client_id: str = "fake-client.apps.googleusercontent.com"
    client_secret: str = "fake-google-client-secret-0123456789"  # noqa: S105 - a fake's
    expires_in: int = 3599
    """Lifetime of issued access tokens (seconds)."""
    codes: dict[str, dict[str, str]] = field(default_factory=dict[str, dict[str, str]])
    access: dict[str, float] = field(default_factory=dict[str, float])
    """Issued access token -> expiry (epoch seconds)."""
    refresh: set[str] = field(default_factory=set[str])
    revoked: set[str] = field(default_factory=set[str])
    issued: int = 0


@dataclass
class FakeData:
    """Everything the fake serves; tests change it to set up a case."""

    google: GoogleState = field(default_factory=GoogleState)
    messages: list[dict[str, Any]] = field(default_factory=gmail_messages)
    labels: list[dict[str, Any]] = field(default_factory=lambda: list(GMAIL_LABELS))
    events: list[dict[str, Any]] = field(default_factory=calendar_events)
    notion_tokens: set[str] = field(
        default_factory=lambda: {"ntn_fake_notion_token_0123456789abcdef"}
    )
    notion_objects: list[dict[str, Any]] = field(default_factory=notion_pages)
    notion_blocks: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {NOTION_PAGE_ID: notion_blocks()}
    )
    notion_rows: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {NOTION_DATABASE_ID: notion_rows()}
    )
    notion_max_page_size: int = 100
    slack_tokens: set[str] = field(default_factory=lambda: {"xoxp-fake-slack-token-0123456789"})
    slack_revoked: set[str] = field(default_factory=set[str])
    channels: list[dict[str, Any]] = field(default_factory=slack_channels)
    channel_messages: dict[str, list[dict[str, Any]]] = field(default_factory=slack_messages)
