"""``http_request`` (the seed's ``curl``): one HTTP request under the SSRF guard.

Secrets never travel in arguments: ``secret_headers`` maps a header to the *name* of a
secret configured under ``[tools.http_request.secrets.<name>]``; the value is resolved
inside the tool (``{name}`` inside the header value is replaced, e.g.
``"Bearer {github}"``; a bare name is replaced whole). Literal header values that look
like credentials are refused. Injected headers are dropped when a redirect changes origin.
Requires approval and ``supervised`` autonomy.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from beamclaw_obs import MissingSecretError, scrub
from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.errors import FetchError, UnsafeAddressError
from beamclaw_tools.fetch import FetchedResponse, guarded_fetch
from beamclaw_tools.netguard import NetworkPolicy, Resolver, system_resolver
from beamclaw_tools.settings import HttpRequestSettings
from beamclaw_tools.types import Autonomy, SessionRef, ToolOutput

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.-]+)\}")
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-www-form-urlencoded",
    "+json",
    "+xml",
)


def is_text_type(content_type: str) -> bool:
    return not content_type or any(t in content_type for t in TEXT_TYPES)


class HttpRequestArgs(ToolArgs):
    url: str = Field(min_length=1, description="http:// or https:// URL.")
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] = "GET"
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    body: str | None = Field(default=None, description="Request body (text or JSON text).")
    secret_headers: dict[str, str] = Field(
        default_factory=dict[str, str],
        description="Header name -> configured secret name, e.g. {'Authorization': "
        "'Bearer {github}'} or {'X-Api-Key': 'weather'}. Never put secret values here.",
    )
    follow_redirects: bool = True


def format_response(response: FetchedResponse, body_text: str | None) -> str:
    lines = [f"HTTP {response.status} {response.reason}".rstrip()]
    if response.redirects:
        lines.append("redirected via: " + " -> ".join(response.redirects))
    for name in ("content-type", "content-length", "location"):
        value = response.header(name)
        if value is not None:
            lines.append(f"{name}: {value}")
    lines.append("")
    if body_text is None:
        lines.append(f"[binary body: {len(response.body)} bytes of {response.content_type}]")
    else:
        lines.append(body_text)
    if response.truncated:
        lines.append(f"[... body truncated at {len(response.body)} bytes (max_response_bytes) ...]")
    return "\n".join(lines)


class HttpRequestTool(TypedTool[HttpRequestArgs]):
    def __init__(self, settings: HttpRequestSettings, resolver: Resolver = system_resolver) -> None:
        self._settings = settings
        self._policy = NetworkPolicy.from_config(settings.allow_private, settings.allowed_hosts)
        self._resolver = resolver
        names = ", ".join(sorted(settings.secrets)) or "none configured"
        super().__init__(
            HttpRequestArgs,
            make_definition(
                "http_request",
                "Make an HTTP request and return status, key headers and body. Private and "
                "loopback addresses are refused. For authenticated APIs reference a configured "
                f"secret by name in secret_headers (available secrets: {names}).",
                HttpRequestArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=settings.timeout_seconds * (settings.max_redirects + 1) + 5,
                max_output_chars=settings.max_output_chars,
            ),
        )

    def _secret_value(self, name: str) -> str:
        secret = self._settings.secrets.get(name)
        if secret is None:
            known = ", ".join(sorted(self._settings.secrets)) or "none"
            raise KeyError(f"unknown secret {name!r} (configured: {known})")
        return secret.resolve(used_for=f"http_request secret {name!r}")

    def _headers(self, args: HttpRequestArgs) -> dict[str, str] | str:
        headers: dict[str, str] = {}
        for name, value in args.headers.items():
            if scrub(value) != value:
                return (
                    f"header {name!r} looks like a literal credential; configure it under "
                    "[tools.http_request.secrets.<name>] and reference it in secret_headers"
                )
            headers[name] = value
        for name, template in args.secret_headers.items():
            try:
                if _PLACEHOLDER.search(template):
                    value = _PLACEHOLDER.sub(lambda m: self._secret_value(m.group(1)), template)
                else:
                    value = self._secret_value(template.strip())
            except KeyError as e:
                return str(e.args[0])
            except MissingSecretError as e:
                return str(e)
            headers[name] = value
        return headers

    async def run(self, args: HttpRequestArgs, session: SessionRef) -> ToolOutput:
        headers = self._headers(args)
        if isinstance(headers, str):
            return ToolOutput.error(headers)
        try:
            response = await guarded_fetch(
                args.method,
                args.url,
                policy=self._policy,
                headers=headers,
                body=args.body.encode("utf-8") if args.body is not None else None,
                max_bytes=self._settings.max_response_bytes,
                timeout_seconds=self._settings.timeout_seconds,
                max_redirects=self._settings.max_redirects,
                follow_redirects=args.follow_redirects,
                sensitive_headers=frozenset(args.secret_headers),
                resolver=self._resolver,
            )
        except (UnsafeAddressError, FetchError) as e:
            return ToolOutput.error(str(e))
        body = response.text() if is_text_type(response.content_type) else None
        return ToolOutput(
            content=format_response(response, body),
            is_error=response.status >= 400,
            structured={"status": response.status, "url": response.final_url},
        )
