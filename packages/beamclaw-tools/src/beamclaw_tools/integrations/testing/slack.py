"""The fake Slack Web API: auth.test, auth.revoke, conversations.list/history,
search.messages (HTTP 200 with ``{"ok": false, "error": ...}`` on failures, as Slack does)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from beamclaw_tools.integrations.testing.fixtures import FakeData
from beamclaw_tools.integrations.testing.paging import page


def _failure(error: str) -> web.Response:
    return web.json_response({"ok": False, "error": error})


def _meta(cursor: str | None) -> dict[str, Any]:
    return {"response_metadata": {"next_cursor": cursor or ""}}


def slack_routes(data: FakeData) -> list[tuple[str, str, Any]]:
    """The routes of the fake Slack."""

    def refusal(request: web.Request) -> web.Response | None:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not token:
            return _failure("not_authed")
        if token in data.slack_revoked:
            return _failure("token_revoked")
        if token not in data.slack_tokens:
            return _failure("invalid_auth")
        return None

    async def auth_test(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        return web.json_response(
            {
                "ok": True,
                "url": "https://acme.slack.com/",
                "team": "Acme",
                "user": "anna",
                "team_id": "T0ACME",
                "user_id": "U0ANNA",
            }
        )

    async def auth_revoke(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        token = request.headers["Authorization"].removeprefix("Bearer ").strip()
        data.slack_revoked.add(token)
        return web.json_response({"ok": True, "revoked": True})

    async def conversations_list(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        q = request.query
        chunk, cursor = page(data.channels, q.get("limit"), q.get("cursor"))
        return web.json_response({"ok": True, "channels": chunk, **_meta(cursor)})

    async def conversations_history(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        q = request.query
        messages = data.channel_messages.get(q.get("channel", ""))
        if messages is None:
            return _failure("channel_not_found")
        chunk, cursor = page(messages, q.get("limit"), q.get("cursor"))
        return web.json_response(
            {
                "ok": True,
                "messages": chunk,
                "has_more": cursor is not None,
                "pin_count": 0,
                **_meta(cursor),
            }
        )

    async def search_messages(request: web.Request) -> web.StreamResponse:
        if (refused := refusal(request)) is not None:
            return refused
        q = request.query
        words = q.get("query", "").lower().split()
        matches: list[dict[str, Any]] = []
        names = {c["id"]: c["name"] for c in data.channels}
        for channel, messages in data.channel_messages.items():
            for m in messages:
                if all(w in m["text"].lower() for w in words):
                    matches.append(
                        {
                            "type": "message",
                            "channel": {"id": channel, "name": names.get(channel, channel)},
                            "user": m["user"],
                            "username": m["user"].removeprefix("U0").lower(),
                            "text": m["text"],
                            "ts": m["ts"],
                            "permalink": f"https://acme.slack.com/archives/{channel}/p{m['ts'].replace('.', '')}",
                        }
                    )
        count = int(q.get("count", "20"))
        number = int(q.get("page", "1"))
        pages = max(1, -(-len(matches) // count))
        chunk = matches[(number - 1) * count : number * count]
        return web.json_response(
            {
                "ok": True,
                "query": q.get("query", ""),
                "messages": {
                    "total": len(matches),
                    "matches": chunk,
                    "paging": {
                        "count": count,
                        "total": len(matches),
                        "page": number,
                        "pages": pages,
                    },
                },
            }
        )

    return [
        ("GET", "/slack/api/auth.test", auth_test),
        ("GET", "/slack/api/auth.revoke", auth_revoke),
        ("GET", "/slack/api/conversations.list", conversations_list),
        ("GET", "/slack/api/conversations.history", conversations_history),
        ("GET", "/slack/api/search.messages", search_messages),
    ]
