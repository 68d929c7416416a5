"""Google Calendar tools (read-only): ``calendar_events``, ``calendar_event``,
``calendar_freebusy``.

Shapes: ``events.list`` / ``events.get`` / ``freeBusy.query`` of the Calendar API v3.
Events are expanded (``singleEvents``) and ordered by start; one line each.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from pydantic import Field

from beamclaw_tools.base import ToolArgs
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

RFC3339 = "RFC 3339 time with offset, e.g. 2026-11-27T09:00:00+01:00"


def when(event: dict[str, Any], key: str) -> str:
    """An event's start or end: ``dateTime`` or (all-day) ``date``."""
    value = as_dict(event.get(key))
    return str(value.get("dateTime") or value.get("date") or "?")


def event_line(event: dict[str, Any]) -> str:
    """One compact line per event."""
    line = f"- {when(event, 'start')} → {when(event, 'end')} | {one_line(str(event.get('summary') or '(no title)'), 120)}"
    if event.get("location"):
        line += f" | at {one_line(str(event['location']), 80)}"
    if event.get("status") == "cancelled":
        line += " | cancelled"
    return line + f" | id={event.get('id')}"


def _calendar_path(base: str, calendar_id: str) -> str:
    return f"{base.rstrip('/')}/calendars/{quote(calendar_id, safe='')}"


class CalendarEventsArgs(PagedArgs):
    time_min: str = Field(min_length=10, description=f"Start of the range ({RFC3339}).")
    time_max: str = Field(min_length=10, description=f"End of the range ({RFC3339}).")
    calendar_id: str = Field(default="primary", description="Calendar id; 'primary' by default.")
    query: str | None = Field(default=None, description="Free text matched against events.")


class CalendarEventsTool(IntegrationTool[CalendarEventsArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            CalendarEventsArgs,
            "calendar_events",
            "List the person's Google Calendar events in a time range (read-only), ordered "
            "by start; pass next_cursor back as cursor for more.",
        )

    async def fetch(self, args: CalendarEventsArgs) -> ToolOutput:
        base = self.context.settings.google.calendar_base_url
        params: dict[str, str | int | list[str]] = {
            "timeMin": args.time_min,
            "timeMax": args.time_max,
            "singleEvents": "true",
            "orderBy": "startTime",
            "maxResults": self.context.page_size(args.page_size),
        }
        if args.query:
            params["q"] = args.query
        if args.cursor:
            params["pageToken"] = args.cursor
        answer = await self.context.api.call(
            "google", "GET", _calendar_path(base, args.calendar_id) + "/events", params=params
        )
        events = as_list(answer.get("items"))
        cursor = answer.get("nextPageToken")
        cursor = cursor if isinstance(cursor, str) else None
        if not events:
            return ToolOutput.ok(f"no events between {args.time_min} and {args.time_max}")
        zone = answer.get("timeZone")
        head = f"calendar {answer.get('summary') or args.calendar_id}" + (
            f" (time zone {zone})" if zone else ""
        )
        text = head + "\n" + "\n".join(event_line(e) for e in events) + next_page(cursor)
        return ToolOutput(
            content=text,
            structured={"ids": [e.get("id") for e in events], "next_cursor": cursor},
        )


class CalendarEventArgs(ToolArgs):
    event_id: str = Field(min_length=1, max_length=1024, description="An id from calendar_events.")
    calendar_id: str = Field(default="primary")


class CalendarEventTool(IntegrationTool[CalendarEventArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            CalendarEventArgs,
            "calendar_event",
            "Read one Google Calendar event (read-only): time, place, organiser, attendees, "
            "description.",
        )

    async def fetch(self, args: CalendarEventArgs) -> ToolOutput:
        base = self.context.settings.google.calendar_base_url
        event = await self.context.api.call(
            "google",
            "GET",
            _calendar_path(base, args.calendar_id) + f"/events/{quote(args.event_id, safe='')}",
        )
        lines = [
            f"Title: {event.get('summary') or '(no title)'}",
            f"When: {when(event, 'start')} → {when(event, 'end')}",
        ]
        if event.get("location"):
            lines.append(f"Where: {event['location']}")
        organizer = as_dict(event.get("organizer"))
        if organizer:
            lines.append(f"Organiser: {organizer.get('displayName') or organizer.get('email')}")
        attendees = as_list(event.get("attendees"))
        if attendees:
            shown = [
                f"{a.get('displayName') or a.get('email')} ({a.get('responseStatus', '?')})"
                for a in attendees[:20]
            ]
            more = f" and {len(attendees) - 20} more" if len(attendees) > 20 else ""
            lines.append("Attendees: " + ", ".join(shown) + more)
        if event.get("hangoutLink"):
            lines.append(f"Meet: {event['hangoutLink']}")
        if event.get("status"):
            lines.append(f"Status: {event['status']}")
        description = str(event.get("description") or "")
        if description.strip():
            lines.append("\n" + self.context.body(description))
        return ToolOutput.ok("\n".join(lines))


class CalendarFreeBusyArgs(ToolArgs):
    time_min: str = Field(min_length=10, description=f"Start of the range ({RFC3339}).")
    time_max: str = Field(min_length=10, description=f"End of the range ({RFC3339}).")
    calendars: list[str] = Field(
        default_factory=lambda: ["primary"], max_length=20, description="Calendar ids."
    )


class CalendarFreeBusyTool(IntegrationTool[CalendarFreeBusyArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            CalendarFreeBusyArgs,
            "calendar_freebusy",
            "When is the person busy in a time range (Google Calendar free/busy, read-only).",
        )

    async def fetch(self, args: CalendarFreeBusyArgs) -> ToolOutput:
        base = self.context.settings.google.calendar_base_url.rstrip("/")
        answer = await self.context.api.call(
            "google",
            "POST",
            f"{base}/freeBusy",
            json={
                "timeMin": args.time_min,
                "timeMax": args.time_max,
                "items": [{"id": c} for c in args.calendars],
            },
        )
        calendars = as_dict(answer.get("calendars"))
        lines: list[str] = []
        for name in args.calendars:
            entry = as_dict(calendars.get(name))
            errors = as_list(entry.get("errors"))
            if errors:
                lines.append(f"{name}: cannot read ({errors[0].get('reason', 'error')})")
                continue
            busy = as_list(entry.get("busy"))
            if not busy:
                lines.append(f"{name}: free the whole range")
                continue
            lines.append(f"{name}: busy")
            lines.extend(f"  - {b.get('start')} → {b.get('end')}" for b in busy)
        return ToolOutput.ok("\n".join(lines))


def calendar_tools(context: IntegrationContext) -> list[IntegrationTool[Any]]:
    """The Google Calendar tools."""
    return [CalendarEventsTool(context), CalendarEventTool(context), CalendarFreeBusyTool(context)]
