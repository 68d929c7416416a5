"""Gmail tools (read-only): ``gmail_search``, ``gmail_read``, ``gmail_labels``.

Shapes: ``users.messages.list`` / ``users.messages.get`` / ``users.labels.list`` of the
Gmail API v1. Search answers one line per message (from, subject, date, snippet) with
the page token as ``next_cursor``; reading answers headers and the text body (the
``text/plain`` part, else the HTML part as Markdown), capped.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any
from urllib.parse import quote

from pydantic import Field

from beamclaw_tools.base import ToolArgs
from beamclaw_tools.builtin.web import html_to_markdown
from beamclaw_tools.integrations.base import (
    IntegrationContext,
    IntegrationTool,
    PagedArgs,
    as_dict,
    as_list,
    next_page,
    one_line,
)
from beamclaw_tools.types import ToolOutput

SUMMARY_HEADERS = ("From", "Subject", "Date")
READ_HEADERS = ("From", "To", "Cc", "Subject", "Date")


def headers_of(message: dict[str, Any]) -> dict[str, str]:
    """A message's headers by name (first occurrence wins)."""
    found: dict[str, str] = {}
    for header in as_list(as_dict(message.get("payload")).get("headers")):
        name, value = header.get("name"), header.get("value")
        if isinstance(name, str) and isinstance(value, str):
            found.setdefault(name.lower(), value)
    return found


def _decode(data: Any) -> str:
    if not isinstance(data, str):
        return ""
    padded = data + "=" * (-len(data) % 4)
    try:
        return base64.urlsafe_b64decode(padded).decode("utf-8", errors="replace")
    except ValueError:
        return ""


def _parts(payload: dict[str, Any]) -> list[dict[str, Any]]:
    found = [payload]
    for part in as_list(payload.get("parts")):
        found.extend(_parts(part))
    return found


def message_text(message: dict[str, Any]) -> str:
    """The readable body: the first ``text/plain`` part, else ``text/html`` as Markdown."""
    parts = _parts(as_dict(message.get("payload")))
    for mime in ("text/plain", "text/html"):
        for part in parts:
            if part.get("mimeType") == mime:
                text = _decode(as_dict(part.get("body")).get("data"))
                if text.strip():
                    if mime == "text/html":
                        return html_to_markdown(text)
                    return text
    return str(message.get("snippet") or "")


def summary_line(message: dict[str, Any]) -> str:
    """One compact line for a search result."""
    headers = headers_of(message)
    return (
        f"- id={message.get('id')} | {one_line(headers.get('date', ''), 40)} | "
        f"from: {one_line(headers.get('from', ''), 80)} | "
        f"subject: {one_line(headers.get('subject', '(no subject)'), 120)}\n"
        f"  {one_line(str(message.get('snippet') or ''), 200)}"
    )


class GmailSearchArgs(PagedArgs):
    query: str = Field(
        default="", description="Gmail search syntax, e.g. 'from:anna is:unread newer_than:7d'."
    )


class GmailSearchTool(IntegrationTool[GmailSearchArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            GmailSearchArgs,
            "gmail_search",
            "Search the person's Gmail (read-only). Answers id, date, sender, subject and "
            "snippet per message; pass next_cursor back as cursor for more.",
        )

    async def fetch(self, args: GmailSearchArgs) -> ToolOutput:
        base = self.context.settings.google.gmail_base_url.rstrip("/")
        params: dict[str, str | int | list[str]] = {
            "maxResults": self.context.page_size(args.page_size)
        }
        if args.query:
            params["q"] = args.query
        if args.cursor:
            params["pageToken"] = args.cursor
        listing = await self.context.api.call(
            "google", "GET", f"{base}/users/me/messages", params=params
        )
        ids = [str(m.get("id")) for m in as_list(listing.get("messages")) if m.get("id")]
        if not ids:
            return ToolOutput.ok(f"no messages match {args.query!r}")
        messages = await asyncio.gather(
            *(
                self.context.api.call(
                    "google",
                    "GET",
                    f"{base}/users/me/messages/{quote(message_id, safe='')}",
                    params={"format": "metadata", "metadataHeaders": list(SUMMARY_HEADERS)},
                )
                for message_id in ids
            )
        )
        lines = [summary_line(message) for message in messages]
        cursor = listing.get("nextPageToken")
        cursor = cursor if isinstance(cursor, str) else None
        text = "\n".join(lines) + next_page(cursor)
        return ToolOutput(content=text, structured={"ids": ids, "next_cursor": cursor})


class GmailReadArgs(ToolArgs):
    message_id: str = Field(min_length=1, max_length=200, description="An id from gmail_search.")


class GmailReadTool(IntegrationTool[GmailReadArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            GmailReadArgs,
            "gmail_read",
            "Read one Gmail message (read-only): headers and text body.",
        )

    async def fetch(self, args: GmailReadArgs) -> ToolOutput:
        base = self.context.settings.google.gmail_base_url.rstrip("/")
        message = await self.context.api.call(
            "google",
            "GET",
            f"{base}/users/me/messages/{quote(args.message_id, safe='')}",
            params={"format": "full"},
        )
        headers = headers_of(message)
        head = [
            f"{name}: {headers[name.lower()]}" for name in READ_HEADERS if name.lower() in headers
        ]
        labels = [str(label) for label in message.get("labelIds") or [] if isinstance(label, str)]
        if labels:
            head.append("Labels: " + ", ".join(labels))
        body = self.context.body(message_text(message))
        return ToolOutput.ok("\n".join(head) + "\n\n" + body)


class GmailLabelsArgs(ToolArgs):
    pass


class GmailLabelsTool(IntegrationTool[GmailLabelsArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            GmailLabelsArgs,
            "gmail_labels",
            "List the person's Gmail labels (id, name, type); use them in gmail_search "
            "as label:NAME.",
        )

    async def fetch(self, args: GmailLabelsArgs) -> ToolOutput:
        base = self.context.settings.google.gmail_base_url.rstrip("/")
        answer = await self.context.api.call("google", "GET", f"{base}/users/me/labels")
        labels = as_list(answer.get("labels"))
        if not labels:
            return ToolOutput.ok("no labels")
        lines = [
            f"- {label.get('name')} (id={label.get('id')}, {str(label.get('type', 'user')).lower()})"
            for label in labels
        ]
        return ToolOutput.ok("\n".join(lines))


def gmail_tools(context: IntegrationContext) -> list[IntegrationTool[Any]]:
    """The Gmail tools."""
    return [GmailSearchTool(context), GmailReadTool(context), GmailLabelsTool(context)]
