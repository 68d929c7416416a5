"""``GET /ui/``: the web page's static files, with a strict Content-Security-Policy.

Invariants:

* Only the files shipped in ``static/`` are served, by exact name (no path is joined
  from the request, so nothing outside that directory can be named); anything else 404.
* Every answer under ``/ui`` carries :data:`UI_HEADERS`: scripts and styles only from
  this origin, no inline script or style, no ``eval``, network only to this origin
  (``/api``, ``/ws``), no framing, and Trusted Types required, so a string can never be
  assigned to an HTML sink (``innerHTML`` and friends throw): the page builds every node
  it shows from text.
* The files need no token (the page asks for it, then sends it as a header or the
  WebSocket's first frame) and are not rate limited (``middleware.STATIC_PREFIX``).
"""

from __future__ import annotations

import functools
from importlib import resources

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

from beamclaw_gateway.errors import ApiError

router = APIRouter(include_in_schema=False)

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    )
)

UI_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    "Cache-Control": "no-store",
}

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


@functools.cache
def static_files() -> dict[str, tuple[bytes, str]]:
    """Every shipped file by name: its bytes and media type (read once)."""
    root = resources.files("beamclaw_gateway.ui") / "static"
    out: dict[str, tuple[bytes, str]] = {}
    for entry in root.iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1]
        if entry.is_file() and suffix in _TYPES:
            out[entry.name] = (entry.read_bytes(), _TYPES[suffix])
    return out


def _file(name: str) -> Response:
    found = static_files().get(name)
    if found is None:
        raise ApiError(
            404, f"no file {name!r} in the web page", code="not_found", headers=UI_HEADERS
        )
    body, media_type = found
    return Response(body, media_type=media_type, headers=UI_HEADERS)


@router.get("/ui")
async def ui_root() -> Response:
    """``/ui`` → ``/ui/`` (the browser keeps the ``#token=`` fragment across it)."""
    return RedirectResponse("/ui/", status_code=308, headers=UI_HEADERS)


@router.get("/ui/")
async def ui_index() -> Response:
    return _file("index.html")


@router.get("/ui/{name}")
async def ui_static(name: str) -> Response:
    return _file(name)
