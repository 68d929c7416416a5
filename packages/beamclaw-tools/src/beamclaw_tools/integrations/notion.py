"""Notion tools (read-only): ``notion_search``, ``notion_read_page``, ``notion_query_database``.

Shapes: ``POST /search``, ``GET /blocks/{id}/children``, ``POST /databases/{id}/query``
(Notion API 2022-06-28, cursor pagination: ``start_cursor`` in, ``next_cursor`` out).
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from pydantic import Field

from beamclaw_tools.integrations.base import (
    IntegrationContext,
    IntegrationTool,
    PagedArgs,
    as_dict,
    as_list,
    next_page,
    one_line,
)
from beamclaw_tools.integrations.notion_markdown import blocks_markdown, page_title, property_text
from beamclaw_tools.types import ToolOutput


def _cursor(answer: dict[str, Any]) -> str | None:
    cursor = answer.get("next_cursor")
    return cursor if answer.get("has_more") and isinstance(cursor, str) else None


class NotionSearchArgs(PagedArgs):
    query: str = Field(default="", max_length=400, description="Words in page titles.")
    kind: Literal["page", "database"] | None = Field(
        default=None, description="Only pages or only databases."
    )


class NotionSearchTool(IntegrationTool[NotionSearchArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            NotionSearchArgs,
            "notion_search",
            "Search the Notion pages and databases shared with BeamClaw (read-only); "
            "answers title, id and last edit.",
        )

    async def fetch(self, args: NotionSearchArgs) -> ToolOutput:
        body: dict[str, Any] = {"page_size": self.context.page_size(args.page_size)}
        if args.query:
            body["query"] = args.query
        if args.kind:
            body["filter"] = {"property": "object", "value": args.kind}
        if args.cursor:
            body["start_cursor"] = args.cursor
        base = self.context.settings.notion.base_url.rstrip("/")
        answer = await self.context.api.call("notion", "POST", f"{base}/search", json=body)
        results = as_list(answer.get("results"))
        cursor = _cursor(answer)
        if not results:
            return ToolOutput.ok(f"nothing in Notion matches {args.query!r}")
        lines = [
            f"- {r.get('object', 'page')}: {one_line(page_title(r), 120)} | id={r.get('id')} "
            f"| edited {r.get('last_edited_time', '?')}"
            for r in results
        ]
        return ToolOutput(
            content="\n".join(lines) + next_page(cursor),
            structured={"ids": [r.get("id") for r in results], "next_cursor": cursor},
        )


class NotionReadPageArgs(PagedArgs):
    page_id: str = Field(
        min_length=1, max_length=100, description="A page (or block) id from notion_search."
    )


class NotionReadPageTool(IntegrationTool[NotionReadPageArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            NotionReadPageArgs,
            "notion_read_page",
            "Read a Notion page as Markdown (read-only). Long pages come in parts: pass "
            "next_cursor back as cursor.",
        )

    async def fetch(self, args: NotionReadPageArgs) -> ToolOutput:
        base = self.context.settings.notion.base_url.rstrip("/")
        params: dict[str, str | int | list[str]] = {"page_size": 100}
        if args.cursor:
            params["start_cursor"] = args.cursor
        answer = await self.context.api.call(
            "notion",
            "GET",
            f"{base}/blocks/{quote(args.page_id, safe='')}/children",
            params=params,
        )
        blocks = as_list(answer.get("results"))
        cursor = _cursor(answer)
        if not blocks:
            return ToolOutput.ok("the page is empty")
        return ToolOutput.ok(self.context.body(blocks_markdown(blocks)) + next_page(cursor))


class NotionQueryArgs(PagedArgs):
    database_id: str = Field(min_length=1, max_length=100, description="A database id.")
    filter: dict[str, Any] | None = Field(
        default=None, description="A Notion database filter object (optional)."
    )


class NotionQueryDatabaseTool(IntegrationTool[NotionQueryArgs]):
    def __init__(self, context: IntegrationContext) -> None:
        super().__init__(
            context,
            NotionQueryArgs,
            "notion_query_database",
            "List the rows of a Notion database (read-only): title, id and properties; "
            "an optional Notion filter object narrows them.",
        )

    async def fetch(self, args: NotionQueryArgs) -> ToolOutput:
        base = self.context.settings.notion.base_url.rstrip("/")
        body: dict[str, Any] = {"page_size": self.context.page_size(args.page_size)}
        if args.filter:
            body["filter"] = args.filter
        if args.cursor:
            body["start_cursor"] = args.cursor
        answer = await self.context.api.call(
            "notion",
            "POST",
            f"{base}/databases/{quote(args.database_id, safe='')}/query",
            json=body,
        )
        rows = as_list(answer.get("results"))
        cursor = _cursor(answer)
        if not rows:
            return ToolOutput.ok("no rows")
        lines: list[str] = []
        for row in rows:
            props = [
                f"{name}: {one_line(property_text(as_dict(value)), 80)}"
                for name, value in as_dict(row.get("properties")).items()
                if as_dict(value).get("type") != "title"
            ]
            detail = " | ".join(p for p in props if not p.endswith(": "))
            lines.append(
                f"- {one_line(page_title(row), 120)} (id={row.get('id')})"
                + (f"\n  {detail}" if detail else "")
            )
        return ToolOutput(
            content="\n".join(lines) + next_page(cursor),
            structured={"ids": [r.get("id") for r in rows], "next_cursor": cursor},
        )


def notion_tools(context: IntegrationContext) -> list[IntegrationTool[Any]]:
    """The Notion tools."""
    return [
        NotionSearchTool(context),
        NotionReadPageTool(context),
        NotionQueryDatabaseTool(context),
    ]
