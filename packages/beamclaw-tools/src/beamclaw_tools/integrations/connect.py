"""``integrations_connect`` and ``integrations_status``: connecting accounts in the chat.

"Connect my calendar" → ``integrations_connect(service="calendar")`` answers the Google
authorisation link (the gateway's callback finishes the flow). For Notion and Slack it
answers where to get a token and a one-time link to the gateway's paste form (or the
``beamclaw integrations connect`` command): a token never travels through the
conversation, so it can reach neither the model nor the logs.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import Field

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


class ConnectTool(TypedTool[ConnectArgs]):
    def __init__(self, integrations: Integrations) -> None:
        self._integrations = integrations
        super().__init__(
            ConnectArgs,
            make_definition(
                "integrations_connect",
                "Connect one of the person's accounts for read-only access: answers the link "
                "to give them (Google: one consent for Gmail + Calendar; Notion, Slack: where "
                "to get a token and a form to paste it). Never ask them to paste a token "
                "into the chat.",
                ConnectArgs,
                timeout_seconds=10,
                source=SOURCE,
            ),
        )

    async def run(self, args: ConnectArgs, session: SessionRef) -> ToolOutput:
        service = service_named(args.service)
        if service is None:
            known = ", ".join(sorted(set(ALIASES)))
            return ToolOutput.error(f"unknown service {args.service!r} (known: {known})")
        try:
            instructions = await asyncio.to_thread(self._integrations.connect_instructions, service)
            return ToolOutput.ok(instructions)
        except IntegrationError as e:
            return ToolOutput.error(str(e))


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
            connections = await asyncio.to_thread(self._integrations.connections)
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
