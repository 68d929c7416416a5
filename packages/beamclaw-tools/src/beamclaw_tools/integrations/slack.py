"""Slack tools (read-only): ``slack_channels``, ``slack_history``, ``slack_search``.

Shapes: ``conversations.list``, ``conversations.history`` (cursor pagination through
``response_metadata.next_cursor``) and ``search.messages`` (page numbers; needs a user
token with ``search:read``) of the Slack Web API.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

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


def slack_time(ts: Any) -> str:
    """A Slack ``ts`` ("1700000000.000100") as UTC ``YYYY-MM-DD HH:MM``."""
    try:
        return datetime.fromtimestamp(float(str(ts)), tz=UTC).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return str(ts)


def _cursor(answer: dict[str, Any]) -> str | None:
    cursor = as_dict(answer.get("response_metadata")).get("next_cursor")
    return cursor if isinstance(cursor, str) and cursor else None


class SlackChannelsArgs(PagedArgs):
    pass


class SlackChannelsTool(IntegrationTool[SlackChannelsArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            SlackChannelsArgs,
            "slack_channels",
            "List the Slack channels the person is in (read-only): name, id, members, topic.",
        )

    async def fetch(self, args: SlackChannelsArgs) -> ToolOutput:
        params: dict[str, str | int | list[str]] = {
            "types": "public_channel,private_channel",
            "exclude_archived": "true",
            "limit": self.context.page_size(args.page_size),
        }
        if args.cursor:
            params["cursor"] = args.cursor
        base = self.context.settings.slack.base_url.rstrip("/")
        answer = await self.context.api.call(
            "slack", "GET", f"{base}/conversations.list", params=params
        )
        channels = as_list(answer.get("channels"))
        cursor = _cursor(answer)
        if not channels:
            return ToolOutput.ok("no channels")
        lines: list[str] = []
        for channel in channels:
            topic = one_line(str(as_dict(channel.get("topic")).get("value") or ""), 100)
            private = " (private)" if channel.get("is_private") else ""
            members = channel.get("num_members")
            line = f"- #{channel.get('name')}{private} id={channel.get('id')}"
            if members is not None:
                line += f" | {members} members"
            lines.append(line + (f" | {topic}" if topic else ""))
        return ToolOutput(
            content="\n".join(lines) + next_page(cursor),
            structured={"ids": [c.get("id") for c in channels], "next_cursor": cursor},
        )


class SlackHistoryArgs(PagedArgs):
    channel: str = Field(min_length=1, max_length=64, description="A channel id (C…).")
    oldest: str | None = Field(default=None, description="Only messages after this Slack ts.")
    latest: str | None = Field(default=None, description="Only messages before this Slack ts.")


class SlackHistoryTool(IntegrationTool[SlackHistoryArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            SlackHistoryArgs,
            "slack_history",
            "Read recent messages of a Slack channel, newest first (read-only); pass "
            "next_cursor back as cursor for older ones.",
        )

    async def fetch(self, args: SlackHistoryArgs) -> ToolOutput:
        params: dict[str, str | int | list[str]] = {
            "channel": args.channel,
            "limit": self.context.page_size(args.page_size),
        }
        for key, value in (
            ("cursor", args.cursor),
            ("oldest", args.oldest),
            ("latest", args.latest),
        ):
            if value:
                params[key] = value
        base = self.context.settings.slack.base_url.rstrip("/")
        answer = await self.context.api.call(
            "slack", "GET", f"{base}/conversations.history", params=params
        )
        messages = as_list(answer.get("messages"))
        cursor = _cursor(answer)
        if not messages:
            return ToolOutput.ok("no messages")
        lines = [
            f"- {slack_time(m.get('ts'))} {m.get('user') or m.get('username') or m.get('bot_id') or '?'}: "
            f"{one_line(str(m.get('text') or ''), 300)}"
            + (f" ({m.get('reply_count')} replies)" if m.get("reply_count") else "")
            + f" [ts={m.get('ts')}]"
            for m in messages
        ]
        return ToolOutput(
            content="\n".join(lines) + next_page(cursor),
            structured={"next_cursor": cursor},
        )


class SlackSearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=400, description="Slack search syntax.")
    page: int = Field(default=1, ge=1, le=100, description="Result page (1 = first).")
    page_size: int | None = Field(default=None, ge=1, le=100)


class SlackSearchTool(IntegrationTool[SlackSearchArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            SlackSearchArgs,
            "slack_search",
            "Search Slack messages (read-only): channel, author, time, text, permalink.",
        )

    async def fetch(self, args: SlackSearchArgs) -> ToolOutput:
        base = self.context.settings.slack.base_url.rstrip("/")
        answer = await self.context.api.call(
            "slack",
            "GET",
            f"{base}/search.messages",
            params={
                "query": args.query,
                "count": self.context.page_size(args.page_size),
                "page": args.page,
            },
        )
        found = as_dict(answer.get("messages"))
        matches = as_list(found.get("matches"))
        paging = as_dict(found.get("paging"))
        if not matches:
            return ToolOutput.ok(f"no Slack messages match {args.query!r}")
        lines = [
            f"- #{as_dict(m.get('channel')).get('name', '?')} {slack_time(m.get('ts'))} "
            f"{m.get('username') or m.get('user') or '?'}: {one_line(str(m.get('text') or ''), 300)}"
            + (f"\n  {m['permalink']}" if m.get("permalink") else "")
            for m in matches
        ]
        page, pages = paging.get("page", args.page), paging.get("pages", 1)
        footer = f"\npage {page} of {pages} ({found.get('total', len(matches))} matches)"
        if isinstance(page, int) and isinstance(pages, int) and page < pages:
            footer += f"; next page: page={page + 1}"
        return ToolOutput.ok("\n".join(lines) + footer)


def slack_tools(context: IntegrationContext) -> list[IntegrationTool[Any]]:
    """The Slack tools."""
    return [SlackChannelsTool(context), SlackHistoryTool(context), SlackSearchTool(context)]
