"""The fake Google: OAuth endpoints (authorize, token, revoke), Gmail v1 and Calendar v3.

The authorisation endpoint consents at once and redirects to the ``redirect_uri`` with a
code (and the ``state``), as Google does after the person clicks "Allow"; the token
endpoint checks the client, the redirect URI and the PKCE verifier against the
challenge, and issues access tokens that expire after ``GoogleState.expires_in``.
"""

from __future__ import annotations

import base64
import hashlib
import time
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from beamclaw_tools.integrations.testing.fixtures import FakeData
from beamclaw_tools.integrations.testing.paging import page

GOOGLE_UNAUTHENTICATED = {
    "error": {
        "code": 401,
        "message": "Request had invalid authentication credentials. Expected OAuth 2 access "
        "token, login cookie or other valid authentication credential.",
        "status": "UNAUTHENTICATED",
    }
}


def _oauth_error(error: str, description: str, status: int = 400) -> web.Response:
    return web.json_response({"error": error, "error_description": description}, status=status)


def _not_found(what: str) -> web.Response:
    return web.json_response(
        {"error": {"code": 404, "message": f"{what} not found", "status": "NOT_FOUND"}},
        status=404,
    )


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _parse_time(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _event_range(event: dict[str, Any]) -> tuple[datetime, datetime] | None:
    start = _parse_time(str(event["start"].get("dateTime", "")))
    end = _parse_time(str(event["end"].get("dateTime", "")))
    return (start, end) if start and end else None


def google_routes(data: FakeData) -> list[tuple[str, str, Any]]:
    """The routes of the fake Google."""
    google = data.google

    def authorised(request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ").strip()
        expiry = google.access.get(token)
        return expiry is not None and expiry > time.time() and token not in google.revoked

    async def authorize(request: web.Request) -> web.StreamResponse:
        q = request.query
        if q.get("client_id") != google.client_id:
            return web.Response(status=400, text="Error 401: invalid_client")
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return web.Response(status=400, text="Error 400: invalid_request (PKCE required)")
        google.issued += 1
        code = f"4/fake-code-{google.issued}"
        google.codes[code] = {
            "redirect_uri": q.get("redirect_uri", ""),
            "challenge": q.get("code_challenge", ""),
            "scope": q.get("scope", ""),
        }
        target = (
            q.get("redirect_uri", "")
            + "?"
            + urlencode({"state": q.get("state", ""), "code": code, "scope": q.get("scope", "")})
        )
        raise web.HTTPFound(target)

    def issue(scope: str, with_refresh: bool) -> dict[str, Any]:
        google.issued += 1
        access = f"ya29.fake-access-{google.issued}-0123456789abcdef"
        google.access[access] = time.time() + google.expires_in
        answer: dict[str, Any] = {
            "access_token": access,
            "expires_in": google.expires_in,
            "scope": scope,
            "token_type": "Bearer",
        }
        if with_refresh:
            refresh = f"1//fake-refresh-{google.issued}-0123456789abcdef"
            google.refresh.add(refresh)
            answer["refresh_token"] = refresh
        return answer

    async def token(request: web.Request) -> web.StreamResponse:
        form = await request.post()
        if (
            form.get("client_id") != google.client_id
            or form.get("client_secret") != google.client_secret
        ):
            return _oauth_error("invalid_client", "The OAuth client was not found.", 401)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            grant_info = google.codes.pop(str(form.get("code", "")), None)
            if grant_info is None:
                return _oauth_error("invalid_grant", "Malformed auth code.")
            if grant_info["redirect_uri"] != form.get("redirect_uri"):
                return _oauth_error("redirect_uri_mismatch", "Bad Request")
            if _challenge(str(form.get("code_verifier", ""))) != grant_info["challenge"]:
                return _oauth_error("invalid_grant", "Invalid code verifier.")
            return web.json_response(issue(grant_info["scope"], with_refresh=True))
        if grant == "refresh_token":
            refresh = str(form.get("refresh_token", ""))
            if refresh not in google.refresh or refresh in google.revoked:
                return _oauth_error("invalid_grant", "Token has been expired or revoked.")
            scope = " ".join(
                (
                    "https://www.googleapis.com/auth/gmail.readonly",
                    "https://www.googleapis.com/auth/calendar.readonly",
                )
            )
            return web.json_response(issue(scope, with_refresh=False))
        return _oauth_error("unsupported_grant_type", f"Invalid grant_type: {grant}")

    async def revoke(request: web.Request) -> web.StreamResponse:
        form = await request.post()
        value = str(form.get("token", ""))
        if value not in google.refresh and value not in google.access:
            return _oauth_error("invalid_token", "Token expired or revoked")
        google.revoked.add(value)
        if value in google.refresh:  # revoking the grant revokes its access tokens too
            google.revoked.update(google.access)
        return web.json_response({})

    # ------------------------------------------------------------------ Gmail
    def gmail_matches(message: dict[str, Any], query: str) -> bool:
        headers = {h["name"].lower(): h["value"] for h in message["payload"]["headers"]}
        for term in query.lower().split():
            if term.startswith("from:"):
                if term[5:] not in headers.get("from", "").lower():
                    return False
            elif term.startswith("label:"):
                wanted = term[6:]
                names = {
                    lab["name"].lower()
                    for lab in data.labels
                    if lab["id"] in message.get("labelIds", [])
                }
                if wanted not in names and wanted.upper() not in message.get("labelIds", []):
                    return False
            elif term == "is:unread":
                if "UNREAD" not in message.get("labelIds", []):
                    return False
            else:
                haystack = " ".join(
                    (headers.get("subject", ""), headers.get("from", ""), message["snippet"])
                ).lower()
                if term not in haystack:
                    return False
        return True

    async def messages_list(request: web.Request) -> web.StreamResponse:
        if not authorised(request):
            return web.json_response(GOOGLE_UNAUTHENTICATED, status=401)
        q = request.query
        found = [m for m in data.messages if gmail_matches(m, q.get("q", ""))]
        chunk, cursor = page(found, q.get("maxResults"), q.get("pageToken"))
        answer: dict[str, Any] = {"resultSizeEstimate": len(found)}
        if chunk:
            answer["messages"] = [{"id": m["id"], "threadId": m["threadId"]} for m in chunk]
        if cursor:
            answer["nextPageToken"] = cursor
        return web.json_response(answer)

    async def messages_get(request: web.Request) -> web.StreamResponse:
        if not authorised(request):
            return web.json_response(GOOGLE_UNAUTHENTICATED, status=401)
        wanted = request.match_info["id"]
        message = next((m for m in data.messages if m["id"] == wanted), None)
        if message is None:
            return _not_found("Requested entity was")
        if request.query.get("format") == "metadata":
            keep = {h.lower() for h in request.query.getall("metadataHeaders", [])}
            payload = {
                "mimeType": message["payload"]["mimeType"],
                "headers": [h for h in message["payload"]["headers"] if h["name"].lower() in keep],
            }
            return web.json_response(
                {**{k: v for k, v in message.items() if k != "payload"}, "payload": payload}
            )
        return web.json_response(message)

    async def profile(request: web.Request) -> web.StreamResponse:
        if not authorised(request):
            return web.json_response(GOOGLE_UNAUTHENTICATED, status=401)
        return web.json_response(
            {
                "emailAddress": "me@example.org",
                "messagesTotal": len(data.messages),
                "threadsTotal": len(data.messages),
                "historyId": "4242",
            }
        )

    async def labels_list(request: web.Request) -> web.StreamResponse:
        if not authorised(request):
            return web.json_response(GOOGLE_UNAUTHENTICATED, status=401)
        return web.json_response({"labels": data.labels})

    # ------------------------------------------------------------------ Calendar
    async def events_list(request: web.Request) -> web.StreamResponse:
        if not authorised(request):
            return web.json_response(GOOGLE_UNAUTHENTICATED, status=401)
        if request.match_info["calendar"] != "primary":
            return _not_found("Calendar")
        q = request.query
        low, high = _parse_time(q.get("timeMin", "")), _parse_time(q.get("timeMax", ""))
        if low is None or high is None:
            return web.json_response(
                {
                    "error": {
                        "code": 400,
                        "message": "Bad Request",
                        "errors": [{"reason": "badRequest"}],
                    }
                },
                status=400,
            )
        text = q.get("q", "").lower()

        def inside(event: dict[str, Any]) -> bool:
            span = _event_range(event)
            if span is None:  # all-day: compare dates
                day = datetime.fromisoformat(event["start"]["date"] + "T00:00:00+00:00")
                span = (day, day)
            return span[1] >= low and span[0] < high and text in event["summary"].lower()

        found = [e for e in data.events if inside(e)]
        chunk, cursor = page(found, q.get("maxResults"), q.get("pageToken"), default=250)
        answer: dict[str, Any] = {
            "kind": "calendar#events",
            "summary": "me@example.org",
            "timeZone": "Europe/Berlin",
            "items": chunk,
        }
        if cursor:
            answer["nextPageToken"] = cursor
        return web.json_response(answer)

    async def events_get(request: web.Request) -> web.StreamResponse:
        if not authorised(request):
            return web.json_response(GOOGLE_UNAUTHENTICATED, status=401)
        wanted = request.match_info["id"]
        event = next((e for e in data.events if e["id"] == wanted), None)
        return web.json_response(event) if event else _not_found("Event")

    async def freebusy(request: web.Request) -> web.StreamResponse:
        if not authorised(request):
            return web.json_response(GOOGLE_UNAUTHENTICATED, status=401)
        body = await request.json()
        low, high = _parse_time(body.get("timeMin", "")), _parse_time(body.get("timeMax", ""))
        if low is None or high is None:
            return web.json_response({"error": {"code": 400, "message": "Bad Request"}}, status=400)
        calendars: dict[str, Any] = {}
        for item in body.get("items", []):
            name = item.get("id")
            if name != "primary":
                calendars[name] = {
                    "errors": [{"domain": "global", "reason": "notFound"}],
                    "busy": [],
                }
                continue
            busy = []
            for event in data.events:
                span = _event_range(event)
                if span and span[1] > low and span[0] < high:
                    busy.append(
                        {"start": event["start"]["dateTime"], "end": event["end"]["dateTime"]}
                    )
            calendars[name] = {"busy": busy}
        return web.json_response(
            {
                "kind": "calendar#freeBusy",
                "timeMin": body["timeMin"],
                "timeMax": body["timeMax"],
                "calendars": calendars,
            }
        )

    return [
        ("GET", "/oauth/authorize", authorize),
        ("POST", "/oauth/token", token),
        ("POST", "/oauth/revoke", revoke),
        ("GET", "/gmail/v1/users/me/messages", messages_list),
        ("GET", "/gmail/v1/users/me/messages/{id}", messages_get),
        ("GET", "/gmail/v1/users/me/labels", labels_list),
        ("GET", "/gmail/v1/users/me/profile", profile),
        ("GET", "/calendar/v3/calendars/{calendar}/events", events_list),
        ("GET", "/calendar/v3/calendars/{calendar}/events/{id}", events_get),
        ("POST", "/calendar/v3/freeBusy", freebusy),
    ]
