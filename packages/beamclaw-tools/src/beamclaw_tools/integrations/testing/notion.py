"""The fake Notion API (2022-06-28): users/me, search, blocks children, database query."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from beamclaw_tools.integrations.notion_markdown import page_title
from beamclaw_tools.integrations.testing.fixtures import FakeData
from beamclaw_tools.integrations.testing.paging import page


def notion_error(status: int, code: str, message: str) -> web.Response:
    body = {"object": "error", "status": status, "code": code, "message": message}
    return web.json_response(body, status=status)


def _listing(results: list[dict[str, Any]], cursor: str | None, kind: str) -> dict[str, Any]:
    return {
        "object": "list",
        "results": results,
        "next_cursor": cursor,
        "has_more": cursor is not None,
        "type": kind,
        kind: {},
    }


def notion_routes(data: FakeData) -> list[tuple[str, str, Any]]:
    """The routes of the fake Notion."""

    def refusal(request: web.Request) -> web.Response | None:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if token not in data.notion_tokens:
            return notion_error(401, "unauthorized", "API token is invalid.")
        if not request.headers.get("Notion-Version"):
            return notion_error(400, "missing_version", "Notion-Version header failed validation.")
        return None

    def size(value: Any) -> int:
        try:
            return min(int(value), data.notion_max_page_size)
        except (TypeError, ValueError):
            return data.notion_max_page_size

    async def users_me(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        return web.json_response(
            {
                "object": "user",
                "id": "16d84278-ab0e-484c-9bdd-b35da3bd8905",
                "name": "BeamClaw",
                "type": "bot",
                "bot": {
                    "owner": {"type": "workspace", "workspace": True},
                    "workspace_name": "Anna's Notion",
                },
            }
        )

    async def search(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        body = await request.json()
        query = str(body.get("query", "")).lower()
        kind = body.get("filter", {}).get("value")
        found = [
            o
            for o in data.notion_objects
            if query in page_title(o).lower() and (kind is None or o["object"] == kind)
        ]
        chunk, cursor = page(found, size(body.get("page_size", 100)), body.get("start_cursor"))
        return web.json_response(_listing(chunk, cursor, "page_or_database"))

    async def children(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        blocks = data.notion_blocks.get(request.match_info["id"])
        if blocks is None:
            return notion_error(
                404,
                "object_not_found",
                f"Could not find block with ID: {request.match_info['id']}. Make sure the "
                "relevant pages and databases are shared with your integration.",
            )
        q = request.query
        chunk, cursor = page(blocks, size(q.get("page_size", 100)), q.get("start_cursor"))
        return web.json_response(_listing(chunk, cursor, "block"))

    async def query(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        rows = data.notion_rows.get(request.match_info["id"])
        if rows is None:
            return notion_error(404, "object_not_found", "Could not find database.")
        body = await request.json()
        wanted = body.get("filter")
        if isinstance(wanted, dict) and "checkbox" in wanted:
            prop = wanted.get("property")
            equals = wanted["checkbox"].get("equals")
            rows = [r for r in rows if r["properties"].get(prop, {}).get("checkbox") == equals]
        chunk, cursor = page(rows, size(body.get("page_size", 100)), body.get("start_cursor"))
        return web.json_response(_listing(chunk, cursor, "page_or_database"))

    return [
        ("GET", "/notion/v1/users/me", users_me),
        ("POST", "/notion/v1/search", search),
        ("GET", "/notion/v1/blocks/{id}/children", children),
        ("POST", "/notion/v1/databases/{id}/query", query),
    ]
