"""``/integrations/...``: where the person's browser finishes connecting an account.

* ``GET /integrations/google/callback?state&code`` — Google redirects here after consent;
  the code is traded for tokens (PKCE) and stored encrypted.
* ``GET /integrations/{notion|slack}/paste?state`` — a form to paste a token into;
  ``POST`` stores it once the service accepted it.

These pages are opened by a browser, so they take no bearer token: the one-time,
expiring ``state`` in the link the agent handed out is the credential (unknown, used or
expired states are refused). Pages are never cached and send no referrer. 404 when
``[tools.integrations]`` is not enabled.
"""

from __future__ import annotations

import asyncio
import html
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from beamclaw_gateway.services import services_of
from beamclaw_tools.integrations import IntegrationError

if TYPE_CHECKING:
    from beamclaw_tools.integrations import Integrations

router = APIRouter(prefix="/integrations", tags=["integrations"])

MAX_FORM_BYTES = 16_384
HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


PAGES: dict[int | str, dict[str, Any]] = {
    200: _html("A page saying the account is connected (or the paste form)."),
    400: _html(
        "A page saying why not: refused consent, unknown, used or expired link, refused token."
    ),
    404: _html("Integrations are not enabled."),
}


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title></head>"
        "<body style='font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto'>"
        f"<h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers=HEADERS)


def _integrations(request: Request) -> Integrations | HTMLResponse:
    system = services_of(request).runtime.system
    integrations = system.integrations if system is not None else None
    if integrations is None:
        return _page(
            "Integrations are off", "<p>Enable <code>[tools.integrations]</code>.</p>", 404
        )
    return integrations


@router.get("/google/callback", response_class=HTMLResponse, responses=PAGES)
async def google_callback(
    request: Request, state: str = "", code: str = "", error: str = ""
) -> HTMLResponse:
    """Finish the Google consent: trade the code for tokens (Gmail + Calendar, read-only)."""
    found = _integrations(request)
    if isinstance(found, HTMLResponse):
        return found
    if error:
        return _page(
            "Google was not connected",
            f"<p>Google answered <code>{html.escape(error)}</code>. Ask BeamClaw for a new "
            "link if you want to try again.</p>",
            400,
        )
    if not state or not code:
        return _page("Google was not connected", "<p>The link is incomplete.</p>", 400)
    try:
        await found.complete_google(state, code)
    except IntegrationError as e:
        return _page("Google was not connected", f"<p>{html.escape(str(e))}</p>", 400)
    return _page(
        "Google is connected",
        "<p>BeamClaw can now read your Gmail and Google Calendar (read-only). You can close "
        "this page; revoke any time with <code>beamclaw integrations revoke google</code>.</p>",
    )


def _form(service: str, state: str, problem: str = "") -> str:
    warning = f"<p style='color: #b00'>{html.escape(problem)}</p>" if problem else ""
    return (
        f"{warning}<form method='post' autocomplete='off'>"
        f"<input type='hidden' name='state' value='{html.escape(state, quote=True)}'>"
        f"<p><label>{html.escape(service.capitalize())} token<br>"
        "<input type='password' name='token' required style='width: 100%'></label></p>"
        "<p><button type='submit'>Connect</button></p></form>"
        "<p>The token is checked with the service, stored encrypted, and never shown to "
        "the agent.</p>"
    )


@router.get("/{service}/paste", response_class=HTMLResponse, responses=PAGES)
async def paste_form(
    request: Request, service: Literal["notion", "slack"], state: str = ""
) -> HTMLResponse:
    """The form a Notion or Slack token is pasted into (one-time link)."""
    found = _integrations(request)
    if isinstance(found, HTMLResponse):
        return found
    if not await asyncio.to_thread(found.paste_form_valid, service, state):
        return _page(
            f"Connect {service}",
            "<p>This link is unknown, used or expired: ask for a new one.</p>",
            400,
        )
    return _page(f"Connect {service}", _form(service, state))


@router.post(
    "/{service}/paste",
    response_class=HTMLResponse,
    responses={**PAGES, 413: _html("The form is larger than 16 KB.")},
)
async def paste_submit(request: Request, service: Literal["notion", "slack"]) -> HTMLResponse:
    """Check the pasted token with the service and store it."""
    found = _integrations(request)
    if isinstance(found, HTMLResponse):
        return found
    raw = await request.body()
    if len(raw) > MAX_FORM_BYTES:
        return _page(f"Connect {service}", "<p>The form is too large.</p>", 413)
    fields = parse_qs(raw.decode("utf-8", errors="replace"))
    state = (fields.get("state") or [""])[0]
    token = (fields.get("token") or [""])[0]
    try:
        stored = await found.complete_paste(service, state, token)
    except IntegrationError as e:
        if not await asyncio.to_thread(found.paste_form_valid, service, state):
            return _page(f"Connect {service}", f"<p>{html.escape(str(e))}</p>", 400)
        return _page(f"Connect {service}", _form(service, state, str(e)), 400)
    who = f" ({html.escape(stored.account)})" if stored.account else ""
    return _page(
        f"{service.capitalize()} is connected",
        f"<p>BeamClaw can now read {html.escape(service)}{who}, read-only. You can close this "
        f"page; revoke any time with <code>beamclaw integrations revoke {service}</code>.</p>",
    )
