"""``integrations_connect`` and ``integrations_status``: connecting accounts in the chat.

"Connect my calendar" → ``integrations_connect(service="calendar")`` answers the Google
authorisation link (the gateway's callback finishes the flow). For Notion and Slack it
explains where to get a token; when the person pastes one, the agent passes it as
``token``: it is registered with the scrubber before anything else, checked with the
service, stored encrypted and never repeated.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import Field

from beamclaw_obs import register_secret
from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.integrations.base import SOURCE
from beamclaw_tools.integrations.errors import IntegrationError
from beamclaw_tools.integrations.tokens import ALIASES, service_named
from beamclaw_tools.types import SessionRef, ToolOutput

if TYPE_CHECKING:
    from beamclaw_tools.integrations.hub import Integrations


class ConnectArgs(ToolArgs):
    service: str = Field(
        min_length=1,
        max_length=40,
        description="google (also: gmail, calendar), notion or slack.",
    )
    token: str | None = Field(
        default=None,
        max_length=4096,
        description="Only for notion/slack: the token the person pasted. Never for google.",
    )


class ConnectTool(TypedTool[ConnectArgs]):
    def __init__(self, integrations: Integrations) -> None:
        self._integrations = integrations
        super().__init__(
            ConnectArgs,
            make_definition(
                "integrations_connect",
                "Connect one of the person's accounts (read-only): Google (Gmail + Calendar) "
                "answers an authorisation link to give them; Notion and Slack answer how to "
                "get a token, and store it when called again with the token they pasted.",
                ConnectArgs,
                timeout_seconds=integrations.settings.timeout_seconds + 5,
                source=SOURCE,
            ),
        )

    async def run(self, args: ConnectArgs, session: SessionRef) -> ToolOutput:
        if args.token:
            register_secret(args.token.strip())
        service = service_named(args.service)
        if service is None:
            known = ", ".join(sorted(set(ALIASES)))
            return ToolOutput.error(f"unknown service {args.service!r} (known: {known})")
        try:
            if service == "google":
                if args.token:
                    return ToolOutput.error(
                        "Google is connected through its authorisation link, not a pasted "
                        "token: call again without token and give the person the link"
                    )
                return ToolOutput.ok(self._integrations.connect_instructions("google"))
            if not args.token:
                return ToolOutput.ok(self._integrations.connect_instructions(service))
            stored = await self._integrations.save_pasted(service, args.token)
        except IntegrationError as e:
            return ToolOutput.error(str(e))
        who = f" ({stored.account})" if stored.account else ""
        return ToolOutput.ok(
            f"{service} is connected{who}; the token is stored encrypted. Suggest the person "
            "delete the message that contained it."
        )


class StatusArgs(ToolArgs):
    pass


def _expiry(expires_at: float | None) -> str:
    if expires_at is None:
        return ""
    return ", access token until " + datetime.fromtimestamp(expires_at, tz=UTC).strftime(
        "%Y-%m-%d %H:%M UTC"
    )


class StatusTool(TypedTool[StatusArgs]):
    def __init__(self, integrations: Integrations) -> None:
        self._integrations = integrations
        super().__init__(
            StatusArgs,
            make_definition(
                "integrations_status",
                "Which of the person's accounts (Google, Notion, Slack) are connected.",
                StatusArgs,
                timeout_seconds=10,
                source=SOURCE,
            ),
        )

    async def run(self, args: StatusArgs, session: SessionRef) -> ToolOutput:
        try:
            connections = self._integrations.connections()
        except IntegrationError as e:
            return ToolOutput.error(str(e))
        lines: list[str] = []
        for c in connections:
            if not c.connected:
                lines.append(f"- {c.service}: not connected")
                continue
            who = f" as {c.account}" if c.account else ""
            refresh = " (refreshed automatically)" if c.refreshable else ""
            lines.append(f"- {c.service}: connected{who}{_expiry(c.expires_at)}{refresh}")
        return ToolOutput.ok("\n".join(lines))
